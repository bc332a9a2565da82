package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestVideoBadInput: every bad request gets OpenAI's error shape with the
// right status, code and param, and leaves no task behind.
func TestVideoBadInput(t *testing.T) {
	g := startVideoGateway(t, nil)
	key := g.keys["default"]
	huge := strings.Repeat("a", 1<<20)
	for _, tc := range []struct {
		name, path, key, body string
		status                int
		code, param           string
	}{
		{"duration 7", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"p","duration":7}`, 400, "invalid_value", "duration"},
		{"duration as a string", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"p","duration":"5"}`, 400, "invalid_request_error", "duration"},
		{"empty prompt", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":""}`, 400, "missing_required_parameter", "prompt"},
		{"blank prompt", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"  "}`, 400, "invalid_value", "prompt"},
		{"no prompt", "/v1/videos/generations", key, `{"model":"demo-video-landscape"}`, 400, "missing_required_parameter", "prompt"},
		{"1 MB prompt", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"` + huge + `"}`, 400, "string_above_max_length", "prompt"},
		{"no model", "/v1/videos/generations", key, `{"prompt":"p"}`, 400, "missing_required_parameter", "model"},
		{"an image model", "/v1/videos/generations", key, `{"model":"demo-image","prompt":"p"}`, 400, "invalid_request_error", "model"},
		{"a chat model", "/v1/videos/generations", key, `{"model":"gpt-4o-mini","prompt":"p"}`, 400, "invalid_request_error", "model"},
		{"unknown model", "/v1/videos/generations", key, `{"model":"no-such-video","prompt":"p"}`, 404, "model_not_found", "model"},
		{"model outside the key's group", "/v1/videos/generations", g.keys["chat-only"], `{"model":"demo-video-landscape","prompt":"p"}`, 404, "model_not_found", "model"},
		{"unknown field", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"p","fps":60}`, 400, "unknown_parameter", "fps"},
		{"size the model lacks", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"p","size":"720x1280"}`, 400, "invalid_value", "size"},
		{"image not an image", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"p","image":"data:image/png;base64,aGVsbG8="}`, 400, "invalid_request_error", "image"},
		{"image on a private address", "/v1/videos/generations", key, `{"model":"demo-video-landscape","prompt":"p","image":"http://127.0.0.1:9/x.png"}`, 400, "invalid_request_error", "image"},
		{"not JSON", "/v1/videos/generations", key, `{"model":`, 400, "invalid_request_error", ""},
		{"no key", "/v1/videos/generations", "", `{"model":"demo-video-landscape","prompt":"p"}`, 401, "invalid_api_key", ""},
		{"OpenAI seconds 7", "/v1/videos", key, `{"model":"demo-video-landscape","prompt":"p","seconds":"7"}`, 400, "invalid_value", "seconds"},
		{"OpenAI seconds not a number", "/v1/videos", key, `{"model":"demo-video-landscape","prompt":"p","seconds":"four"}`, 400, "invalid_value", "seconds"},
		{"OpenAI file_id", "/v1/videos", key, `{"model":"demo-video-landscape","prompt":"p","input_reference":{"file_id":"file_1"}}`, 400, "invalid_request_error", "input_reference.file_id"},
		{"OpenAI default model not in the group", "/v1/videos", g.keys["basic"], `{"prompt":"p"}`, 404, "model_not_found", "model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := g.post(tc.path, "application/json", tc.key, strings.NewReader(tc.body))
			var e struct {
				Error struct {
					Code  string  `json:"code"`
					Param *string `json:"param"`
					Type  string  `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
			}
			param := ""
			if e.Error.Param != nil {
				param = *e.Error.Param
			}
			if resp.StatusCode != tc.status || e.Error.Code != tc.code || param != tc.param {
				t.Errorf("got %d %q param %q, want %d %q param %q: %s", resp.StatusCode, e.Error.Code, param, tc.status, tc.code, tc.param, b)
			}
		})
	}
	for _, id := range []string{"video_" + strings.Repeat("0", 31) + "g", strings.Repeat("a", 10<<10), "video_..%2F..%2Fetc", "..%2F..%2Fv1%2Fmodels", "video_00000000000000000000000000000000"} {
		for _, path := range []string{"/v1/videos/generations/" + id, "/v1/videos/" + id, "/v1/videos/" + id + "/content"} {
			if code := g.getJSON(path, key, nil); code != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path[:min(len(path), 80)], code)
			}
		}
	}
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	g.getJSON("/v1/videos/generations/video_00000000000000000000000000000000", key, &body)
	if body.Error.Code != "task_not_found" {
		t.Errorf("unknown task: code %q", body.Error.Code)
	}
	req, _ := http.NewRequest(http.MethodPut, g.URL+"/v1/videos/video_00000000000000000000000000000000", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, DELETE" {
		t.Errorf("PUT: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
