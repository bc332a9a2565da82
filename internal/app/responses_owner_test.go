package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// upstreamCalls counts what the fake upstream received: GETs of stored
// responses (logged with their request URI as body) and everything else.
func upstreamCalls(g *gateway) (gets, posts int) {
	for _, r := range g.upstream.Received() {
		if strings.HasPrefix(string(r.Body), "/v1/responses/") {
			gets++
		} else {
			posts++
		}
	}
	return gets, posts
}

// respAPI is the SDK's Responses service with key.
func respAPI(g *gateway, key string) *responses.ResponseService {
	c := g.client(key)
	return &c.Responses
}

// notFoundBody is the gateway's answer for a response id the caller may
// not read, the same whether the id exists or not.
func notFoundBody(id string) string {
	return `{"error":{"message":"Response with id '` + id + `' not found.","type":"invalid_request_error","param":null,"code":"not_found"}}`
}

// assertHidden checks that key's GET of id is the plain 404 and that the
// vendor was not asked.
func assertHidden(t *testing.T, g *gateway, key, id string) {
	t.Helper()
	before, _ := upstreamCalls(g)
	_, err := respAPI(g, key).Get(context.Background(), id, responses.ResponseGetParams{})
	if e := apiError(t, err, http.StatusNotFound, "not_found"); e.Message != "Response with id '"+id+"' not found." {
		t.Errorf("message %q", e.Message)
	}
	resp, b := getRaw(t, g, "/v1/responses/"+id, key)
	if resp.StatusCode != http.StatusNotFound || strings.TrimSpace(string(b)) != notFoundBody(id) {
		t.Errorf("raw GET: %d %s", resp.StatusCode, b)
	}
	if after, _ := upstreamCalls(g); after != before {
		t.Errorf("the upstream received %d GETs for a hidden response", after-before)
	}
}

// Only the account that created a stored response can read it: another
// account's key gets the 404 an unknown id gets, and the vendor is never
// asked. store: false responses are not recorded, so nobody can.
func TestResponsesOwnership(t *testing.T) {
	cases := []struct {
		name   string
		store  *bool // nil: not sent (the vendor stores by default)
		stream bool
		saved  bool
	}{
		{"stored by default", nil, false, true},
		{"store true", oai.Ptr(true), false, true},
		{"store false", oai.Ptr(false), false, false},
		{"stream stored by default", nil, true, true},
		{"stream store true", oai.Ptr(true), true, true},
		{"stream store false", oai.Ptr(false), true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t)
			keyA, keyB := g.keys["default"], g.createKey("default", false) // createKey: a new account
			a := g.client(keyA)
			ctx := context.Background()
			params := responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi")}
			if tc.store != nil {
				params.Store = oai.Bool(*tc.store)
			}
			id := providertest.StoredResponseID
			if !tc.stream {
				r, err := a.Responses.New(ctx, params)
				if err != nil || r.ID != id {
					t.Fatalf("create: %v %+v", err, r)
				}
			} else {
				s := a.Responses.NewStreaming(ctx, params)
				if !s.Next() || s.Current().Type != "response.created" || s.Current().Response.ID != id {
					t.Fatalf("first event %+v, %v", s.Current(), s.Err())
				}
				if tc.saved {
					// Recorded before response.created was relayed: readable mid-stream.
					if r, err := a.Responses.Get(ctx, id, responses.ResponseGetParams{}); err != nil || r.ID != id {
						t.Fatalf("GET during the stream: %v", err)
					}
				}
				for s.Next() {
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				_ = s.Close()
			}

			assertHidden(t, g, keyB, id)
			if !tc.saved {
				assertHidden(t, g, keyA, id)
				return
			}
			before, _ := upstreamCalls(g)
			r, err := a.Responses.Get(ctx, id, responses.ResponseGetParams{})
			if err != nil || r.ID != id || r.OutputText() == "" {
				t.Fatalf("owner's GET: %v %+v", err, r)
			}
			if after, _ := upstreamCalls(g); after != before+1 {
				t.Errorf("owner's GET reached the upstream %d times", after-before)
			}
		})
	}
}

// previous_response_id names a stored conversation: another account's id
// is refused as OpenAI refuses an unknown one, before anything is sent.
func TestResponsesOwnershipPrevious(t *testing.T) {
	g := startGateway(t)
	keyA, keyB := g.keys["default"], g.createKey("default", false)
	ctx := context.Background()
	id := providertest.StoredResponseID
	if _, err := respAPI(g, keyA).New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi")}); err != nil {
		t.Fatal(err)
	}
	next := responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("and then?"), PreviousResponseID: oai.String(id)}

	_, posts := upstreamCalls(g)
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			s := respAPI(g, keyB).NewStreaming(ctx, next)
			for s.Next() {
			}
			err = s.Err()
		} else {
			_, err = respAPI(g, keyB).New(ctx, next)
		}
		e := apiError(t, err, http.StatusBadRequest, "previous_response_not_found")
		if e.Param != "previous_response_id" || e.Message != "Previous response with id '"+id+"' not found." {
			t.Errorf("stream %v: %+v", stream, e)
		}
	}
	// An id nobody created is refused the same way.
	unknown := next
	unknown.PreviousResponseID = oai.String("resp_unknown")
	_, err := respAPI(g, keyA).New(ctx, unknown)
	apiError(t, err, http.StatusBadRequest, "previous_response_not_found")
	if _, after := upstreamCalls(g); after != posts {
		t.Errorf("%d refused requests reached the upstream", after-posts)
	}

	// The owner continues its conversation.
	if _, err := respAPI(g, keyA).New(ctx, next); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		PreviousResponseID string `json:"previous_response_id"`
	}
	if err := json.Unmarshal(g.upstream.Last().Body, &sent); err != nil || sent.PreviousResponseID != id {
		t.Errorf("upstream got %s", g.upstream.Last().Body)
	}
}

// An id the vendor hands out again (the fake always answers the same one)
// stays with its first owner: the second account still gets its answer,
// the failed record is only logged. Translated responses are never stored.
func TestResponsesOwnershipEdges(t *testing.T) {
	g := startGateway(t)
	keyA, keyB := g.keys["default"], g.createKey("default", false)
	ctx := context.Background()
	id := providertest.StoredResponseID
	for _, key := range []string{keyA, keyB} {
		if r, err := respAPI(g, key).New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi")}); err != nil || r.ID != id {
			t.Fatalf("create: %v", err)
		}
	}
	if _, err := respAPI(g, keyA).Get(ctx, id, responses.ResponseGetParams{}); err != nil {
		t.Errorf("first owner: %v", err)
	}
	assertHidden(t, g, keyB, id)

	// A translated response has an id, but nothing stores it.
	r, err := respAPI(g, keyA).New(ctx, responses.ResponseNewParams{Model: "demo-chat", Input: textInput("hi")})
	if err != nil || !strings.HasPrefix(r.ID, "resp_") {
		t.Fatalf("translated: %v %+v", err, r)
	}
	assertHidden(t, g, keyA, r.ID)

	// Refused by the gateway, before any upstream call: counted, no records.
	if n := refusalCounts(g)["responses.get 404 not_found"]; n != 4 { // two requests per assertHidden
		t.Errorf("%d responses.get 404 refusals, want 4", n)
	}
}
