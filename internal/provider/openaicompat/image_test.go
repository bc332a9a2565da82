package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

func TestImageBody(t *testing.T) {
	cases := []struct {
		name, body, upstream string
		setModel             bool
		want                 string
	}{
		{"untouched", `{"model":"dall-e-2","prompt":"x","response_format":"url"}`, "dall-e-2", false,
			`{"model":"dall-e-2","prompt":"x","response_format":"url"}`},
		{"model patched", `{"model":"painter","prompt":"x"}`, "dall-e-3", true, `{"model":"dall-e-3","prompt":"x"}`},
		{"response_format dropped for GPT image", `{"model":"gpt-image-1","response_format":"b64_json","prompt":"x"}`, "gpt-image-1", false,
			`{"model":"gpt-image-1","prompt":"x"}`},
		{"snapshots too", `{"model":"p","prompt":"x","response_format":"url"}`, "gpt-image-1.5", true, `{"model":"gpt-image-1.5","prompt":"x"}`},
		{"dall-e keeps it", `{"model":"p","prompt":"x","response_format":"url"}`, "dall-e-2", true, `{"model":"dall-e-2","prompt":"x","response_format":"url"}`},
		{"gpt-image-1-mini", `{"model":"p","prompt":"x","response_format":"url"}`, "gpt-image-1-mini", true, `{"model":"gpt-image-1-mini","prompt":"x"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := imageBody([]byte(tc.body), tc.upstream, tc.setModel)
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

func TestGenerateImagesPassThrough(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	ctx := context.Background()

	res, err := c.GenerateImages(ctx, &provider.ImageRequest{PublicModel: "painter", UpstreamModel: "dall-e-3",
		Body: []byte(`{"model":"painter","prompt":"x","quality":"hd","extra":{"kept":true}}`), N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sent := f.Last(); string(sent.Body) != `{"model":"dall-e-3","prompt":"x","quality":"hd","extra":{"kept":true}}` ||
		sent.Header.Get("Authorization") != "Bearer sk-up" {
		t.Fatalf("sent %s %v", sent.Body, sent.Header)
	}
	if len(res.Images) != 1 || !strings.HasPrefix(res.Images[0].URL, "https://") || res.Images[0].RevisedPrompt == "" || res.Created != 1713833628 {
		t.Fatalf("answer %+v", res)
	}

	res, err = c.GenerateImages(ctx, &provider.ImageRequest{PublicModel: "gpt-image-1", UpstreamModel: "gpt-image-1",
		Body: []byte(`{"model":"gpt-image-1","prompt":"x","n":2,"response_format":"url"}`), N: 2})
	if err != nil {
		t.Fatal(err) // the fake refuses response_format for GPT image models, as OpenAI does
	}
	if len(res.Images) != 2 || res.Images[0].B64JSON == "" || res.Size != "1536x1024" || res.Quality != "medium" {
		t.Fatalf("answer %+v", res)
	}
	for _, k := range []string{"usage", "background", "output_format", "size", "quality"} {
		if _, ok := res.Extra[k]; !ok {
			t.Errorf("member %s was not kept", k)
		}
	}
	if _, ok := res.Extra["data"]; ok {
		t.Error("data must not be an extra member")
	}

	_, err = c.GenerateImages(ctx, &provider.ImageRequest{PublicModel: "x", UpstreamModel: "err-429", Body: []byte(`{"model":"x","prompt":"x"}`)})
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != 429 {
		t.Fatalf("err-429: %v", err)
	}
}

func TestParseImages(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"not JSON", `{"data":[`, 502},
		{"not an object", `[1]`, 502},
		{"item without an image", `{"created":1,"data":[{"revised_prompt":"x"}]}`, 502},
		{"data not an array", `{"created":1,"data":{}}`, 502},
		{"error with 200", `{"error":{"message":"boom","type":"server_error"}}`, 502},
	} {
		_, err := parseImages("fake", nil, http.Header{}, []byte(tc.body))
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != tc.status {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	res, err := parseImages("fake", nil, http.Header{}, []byte(`{"created":5,"data":[]}`))
	if err != nil || len(res.Images) != 0 || res.Extra != nil {
		t.Fatalf("empty answer: %+v %v", res, err)
	}
}

// Azure's images live under the deployment, with the api-version.
func TestGenerateImagesAzure(t *testing.T) {
	var path, query, key string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, key = r.URL.Path, r.URL.RawQuery, r.Header.Get("Api-Key")
		_, _ = io.WriteString(w, `{"created":1,"data":[{"url":"https://x.example/a.png"}]}`)
	}))
	defer s.Close()
	c, err := New(Options{Name: "az", BaseURL: s.URL, APIKey: "az-key", Azure: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GenerateImages(context.Background(), &provider.ImageRequest{PublicModel: "dall-e-3", UpstreamModel: "my-dalle",
		Body: []byte(`{"model":"dall-e-3","prompt":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if path != "/openai/deployments/my-dalle/images/generations" || query != "api-version="+DefaultAzureAPIVersion || key != "az-key" {
		t.Fatalf("%s?%s key %q", path, query, key)
	}
}

// heldBytes is a FormFile over b.
func heldBytes(field, name, ct string, b []byte) provider.FormFile {
	return provider.FormFile{Field: field, Filename: name, ContentType: ct, Size: int64(len(b)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func TestEditImagesForm(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	img, mask := []byte("\x89PNG\r\n\x1a\nimage bytes"), []byte("\x89PNG\r\n\x1a\nmask bytes")
	req := &provider.ImageEditRequest{PublicModel: "editor", UpstreamModel: "gpt-image-1", N: 2,
		Fields: []provider.FormField{{Name: "prompt", Value: "x"}, {Name: "model", Value: "editor"}, {Name: "n", Value: "2"},
			{Name: "response_format", Value: "url"}, {Name: "background", Value: "transparent"}},
		Files: []provider.FormFile{heldBytes("image[]", "a.png", "image/png", img), heldBytes("image[]", "b.png", "image/png", img),
			heldBytes("mask", "mask.png", "image/png", mask)}}
	res, err := c.EditImages(context.Background(), req)
	if err != nil {
		t.Fatal(err) // the fake checks the Content-Length is exact
	}
	if len(res.Images) != 2 {
		t.Fatalf("answer %+v", res)
	}
	sent := f.Last()
	parts, err := providertest.ParseForm(sent.Header.Get("Content-Type"), sent.Body)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		got = append(got, p.Field+"="+p.Filename+":"+p.ContentType+":"+string(p.Data))
	}
	want := []string{"prompt=::x", "model=::gpt-image-1", "n=::2", "background=::transparent",
		"image[]=a.png:image/png:" + string(img), "image[]=b.png:image/png:" + string(img), "mask=mask.png:image/png:" + string(mask)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("form\n%q\nwant\n%q", got, want)
	}
	if sent.Header.Get("Authorization") != "Bearer sk-up" {
		t.Fatal("no credentials")
	}
}

// A vendor that refuses at once does not leave the form writer stuck, and
// a held file that cannot be read fails the request.
func TestEditImagesFailures(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c, err := New(Options{Name: "fake", BaseURL: f.URL + "/v1/", Timeout: 20 * time.Second, IdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	big := heldBytes("image", "a.png", "image/png", make([]byte, 4<<20))
	done := make(chan error, 1)
	go func() {
		_, err := c.EditImages(context.Background(), &provider.ImageEditRequest{PublicModel: "x", UpstreamModel: "err-500",
			Fields: []provider.FormField{{Name: "prompt", Value: "x"}}, Files: []provider.FormFile{big}})
		done <- err
	}()
	select {
	case err := <-done:
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 502 {
			t.Fatalf("err-500: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("EditImages did not return")
	}

	broken := provider.FormFile{Field: "image", Filename: "a.png", ContentType: "image/png", Size: 10,
		Open: func() (io.ReadCloser, error) { return nil, errors.New("gone") }}
	if _, err := c.EditImages(context.Background(), &provider.ImageEditRequest{PublicModel: "x", UpstreamModel: "dall-e-2",
		Fields: []provider.FormField{{Name: "prompt", Value: "x"}}, Files: []provider.FormFile{broken}}); err == nil {
		t.Fatal("a file that cannot be read must fail the request")
	}
}
