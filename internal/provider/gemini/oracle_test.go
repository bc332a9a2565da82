package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// The official Go SDK (google.golang.org/genai) is the oracle for the wire
// format. Its request type for the REST call is not exported, so a request
// body is decoded member by member into the exported types the SDK sends
// for them: contents → []*genai.Content, systemInstruction → *genai.Content,
// tools → []*genai.Tool, toolConfig → *genai.ToolConfig, generationConfig
// → *genai.GenerationConfig (whose JSON names are the REST ones). Each
// decode disallows unknown fields, so a misspelt or invented member fails.
// Fixture responses and stream events must decode into
// genai.GenerateContentResponse the same way.

// oracleRequest is GenerateContentRequest built from the SDK's own types.
type oracleRequest struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction"`
	Tools             []*genai.Tool           `json:"tools"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig"`
}

func strict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// checkRequestOracle fails t unless body decodes strictly into the SDK's
// types and is well formed: roles user/model alternate and every part
// carries exactly one kind of data.
func checkRequestOracle(t testing.TB, body []byte) {
	t.Helper()
	var r oracleRequest
	if err := strict(body, &r); err != nil {
		t.Fatalf("request does not decode into genai types: %v\n%s", err, body)
	}
	if len(r.Contents) == 0 {
		t.Fatalf("request has no contents: %s", body)
	}
	for i, c := range r.Contents {
		if c.Role != genai.RoleUser && c.Role != genai.RoleModel {
			t.Errorf("contents[%d]: role %q", i, c.Role)
		}
		if i > 0 && r.Contents[i-1].Role == c.Role {
			t.Errorf("contents[%d]: role %q repeats; turns must alternate", i, c.Role)
		}
		checkParts(t, c.Parts)
	}
	if r.SystemInstruction != nil {
		checkParts(t, r.SystemInstruction.Parts)
	}
	for _, tl := range r.Tools {
		for _, fd := range tl.FunctionDeclarations {
			if fd.Name == "" {
				t.Errorf("function declaration without a name")
			}
		}
	}
}

func checkParts(t testing.TB, parts []*genai.Part) {
	t.Helper()
	if len(parts) == 0 {
		t.Errorf("a content without parts")
	}
	for i, p := range parts {
		n := 0
		if p.Text != "" {
			n++
		}
		if p.InlineData != nil {
			n++
			if len(p.InlineData.Data) == 0 || p.InlineData.MIMEType == "" {
				t.Errorf("part %d: empty inline data", i)
			}
		}
		if p.FunctionCall != nil {
			n++
		}
		if p.FunctionResponse != nil {
			n++
			if p.FunctionResponse.Response == nil {
				t.Errorf("part %d: functionResponse without response", i)
			}
		}
		if n != 1 {
			t.Errorf("part %d carries %d kinds of data: %+v", i, n, p)
		}
	}
}

// oracleResponse mirrors genai.GenerateContentResponse member by member:
// that type's own UnmarshalJSON does not honour DisallowUnknownFields, its
// members' types do.
type oracleResponse struct {
	Candidates     []*genai.Candidate                           `json:"candidates"`
	PromptFeedback *genai.GenerateContentResponsePromptFeedback `json:"promptFeedback"`
	UsageMetadata  *genai.GenerateContentResponseUsageMetadata  `json:"usageMetadata"`
	ModelVersion   string                                       `json:"modelVersion"`
	ResponseID     string                                       `json:"responseId"`
	CreateTime     string                                       `json:"createTime"`
}

// checkResponseOracle fails t unless body is an answer the SDK accepts (or
// Google's error object, which streams send mid-way).
func checkResponseOracle(t testing.TB, body []byte) {
	t.Helper()
	var e struct {
		Error *struct {
			Code    int              `json:"code"`
			Message string           `json:"message"`
			Status  string           `json:"status"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if strict(body, &e) == nil && e.Error != nil {
		if e.Error.Code == 0 || e.Error.Status == "" || e.Error.Message == "" {
			t.Errorf("error fixture lacks code, status or message: %s", body)
		}
		return
	}
	var sdk genai.GenerateContentResponse
	if err := json.Unmarshal(body, &sdk); err != nil {
		t.Fatalf("fixture does not decode into genai.GenerateContentResponse: %v\n%s", err, body)
	}
	// The Developer API names citations "citationSources"; the SDK renames
	// the member to "citations" before decoding (citationMetadataFromMldev
	// in genai's models.go), and so does this check.
	body = bytes.ReplaceAll(body, []byte(`"citationSources"`), []byte(`"citations"`))
	var r oracleResponse
	if err := strict(body, &r); err != nil {
		t.Fatalf("fixture does not decode strictly into genai types: %v\n%s", err, body)
	}
	if len(r.Candidates) == 0 && r.PromptFeedback == nil {
		t.Errorf("fixture has neither candidates nor promptFeedback: %s", body)
	}
}

// TestFakeUpstreamFixturesOracle: the fake Gemini server's recorded answers
// (internal/provider/providertest/testdata/gemini) are ones the SDK accepts.
func TestFakeUpstreamFixturesOracle(t *testing.T) {
	dir := filepath.Join("..", "providertest", "testdata", "gemini")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			if strings.HasPrefix(filepath.Base(name), "embed") {
				checkEmbedResponseOracle(t, b) // embed_test.go: batchEmbedContents answers
				return
			}
			if strings.HasSuffix(name, ".sse") {
				for _, ev := range sseData(b) {
					checkResponseOracle(t, ev)
				}
				return
			}
			checkResponseOracle(t, b)
		})
	}
}
