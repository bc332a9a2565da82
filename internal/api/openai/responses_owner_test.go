package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/store"
)

// ownerStore is a store.Responses in memory whose calls can be made to fail.
type ownerStore struct {
	owners map[string]string
	err    error // returned by every call when set
	saved  []string
}

func (s *ownerStore) SaveResponseOwner(ctx context.Context, id, accountID string, _ time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.err != nil {
		return s.err
	}
	s.saved = append(s.saved, id+"="+accountID)
	if o, ok := s.owners[id]; ok && o != accountID {
		return fmt.Errorf("fake: %w", store.ErrConflict)
	}
	s.owners[id] = accountID
	return nil
}

func (s *ownerStore) ResponseOwner(_ context.Context, id string) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	o, ok := s.owners[id]
	if !ok {
		return "", fmt.Errorf("fake: %w", store.ErrNotFound)
	}
	return o, nil
}

func (s *ownerStore) SaveResponse(ctx context.Context, r store.StoredResponse) error {
	return s.SaveResponseOwner(ctx, r.ID, r.AccountID, r.CreatedAt)
}

func (s *ownerStore) SizeResponses(context.Context, []store.ResponseSize) error { return s.err }

func (s *ownerStore) StoredResponse(ctx context.Context, id string) (store.StoredResponse, error) {
	o, err := s.ResponseOwner(ctx, id)
	return store.StoredResponse{ID: id, AccountID: o}, err
}

// checkOwner lets only the creating account through and answers every
// other case with the same not-found error, except a failing store.
func TestCheckOwner(t *testing.T) {
	const id = "resp_1"
	cases := []struct {
		name       string
		st         store.Responses
		account    string
		wantStatus int // 0: allowed
	}{
		{"owner", &ownerStore{owners: map[string]string{id: "acct_a"}}, "acct_a", 0},
		{"other account", &ownerStore{owners: map[string]string{id: "acct_a"}}, "acct_b", http.StatusNotFound},
		{"unknown id", &ownerStore{owners: map[string]string{}}, "acct_a", http.StatusNotFound},
		{"no account", &ownerStore{owners: map[string]string{id: ""}}, "", http.StatusNotFound},
		{"no store", nil, "acct_a", http.StatusNotFound},
		{"store fails", &ownerStore{err: errors.New("disk on fire")}, "acct_a", http.StatusInternalServerError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{Core: &lifecycle.Core{}}
			if tc.st != nil {
				h.Responses = tc.st
			}
			err := h.checkOwner(context.Background(), tc.account, id, responseNotFound)
			if tc.wantStatus == 0 {
				if err != nil {
					t.Fatalf("got %v, want access", err)
				}
				return
			}
			e := apierr.From(err)
			if e.Status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%v)", e.Status, tc.wantStatus, err)
			}
			if tc.wantStatus == http.StatusNotFound && (e.Code != apierr.CodeNotFound || e.Message != responseNotFound(id).Message) {
				t.Errorf("got %+v, want the same answer as for an unknown id", e)
			}
		})
	}
	e := apierr.From((&Handler{Core: &lifecycle.Core{}}).checkOwner(context.Background(), "acct_a", "resp_2", previousNotFound))
	if e.Status != 400 || e.Code != "previous_response_not_found" || e.Param != "previous_response_id" ||
		e.Message != "Previous response with id 'resp_2' not found." {
		t.Errorf("previous: %+v", e)
	}
}

// saveOwner records the caller's account, and only logs a failure.
func TestSaveOwner(t *testing.T) {
	info := &reqinfo.Info{ID: "req_1", AccountID: "acct_a"}
	cases := []struct {
		name    string
		st      *ownerStore
		id      string
		wantLog string // "" : nothing logged
		saved   int
	}{
		{"saved", &ownerStore{owners: map[string]string{}}, "resp_1", "", 1},
		{"again", &ownerStore{owners: map[string]string{"resp_1": "acct_a"}}, "resp_1", "", 1},
		{"conflict", &ownerStore{owners: map[string]string{"resp_1": "acct_b"}}, "resp_1", "already exists", 1},
		{"store fails", &ownerStore{err: errors.New("disk on fire")}, "resp_1", "disk on fire", 0},
		{"no id", &ownerStore{owners: map[string]string{}}, "", "", 0},
		{"no store", nil, "resp_1", "no store", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := &Handler{Core: &lifecycle.Core{Log: slog.New(slog.NewTextHandler(&buf, nil))}}
			if tc.st != nil {
				h.Responses = tc.st
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a client that left does not stop the insert
			h.saveOwner(ctx, info, tc.id)
			logged := buf.String()
			if tc.wantLog == "" && logged != "" || tc.wantLog != "" && !strings.Contains(logged, tc.wantLog) {
				t.Errorf("logged %q, want %q", logged, tc.wantLog)
			}
			if tc.st != nil && len(tc.st.saved) != tc.saved {
				t.Errorf("saved %v, want %d", tc.st.saved, tc.saved)
			}
			if tc.wantLog != "" && !strings.Contains(logged, "level=ERROR") {
				t.Errorf("not logged as an error: %q", logged)
			}
		})
	}
}

func TestResponseIDs(t *testing.T) {
	cases := []struct {
		event, want string
	}{
		{`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response"}}`, "resp_1"},
		{`{"type":"response.output_item.added","item":{"id":"msg_1"}}`, ""},
		{`{"type":"response.created","response":{"id":7}}`, ""},
		{`{"type":"response.created","response":null}`, ""},
		{`{"type":"response.created","response":"resp_1"}`, ""},
	}
	for _, tc := range cases {
		if got := eventResponseID([]byte(tc.event)); got != tc.want {
			t.Errorf("eventResponseID(%s) = %q, want %q", tc.event, got, tc.want)
		}
	}
	if got := responseID([]byte(`{"object":"response","id":"resp_\u0031"}`)); got != "resp_1" {
		t.Errorf("responseID = %q", got)
	}
	if got := responseID([]byte(`{"object":"response"}`)); got != "" {
		t.Errorf("responseID without id = %q", got)
	}
}
