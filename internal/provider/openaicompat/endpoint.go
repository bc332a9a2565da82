package openaicompat

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/internal/provider"
)

// URL is the upstream URL of an endpoint path such as "embeddings" or
// "images/generations" for the vendor's model upstream: {base}/{path}, or
// on Azure {base}/openai/deployments/{upstream}/{path}?api-version=.
// Endpoints that are not per model (GET responses/{id}) pass upstream "".
func (c *Client) URL(path, upstream string) string {
	path = strings.TrimLeft(path, "/")
	if c.chatURL != "" || upstream == "" {
		if c.azureQuery != "" { // Azure, not per deployment
			return c.base + "/openai/" + path + c.azureQuery[strings.IndexByte(c.azureQuery, '?'):]
		}
		return c.base + "/" + path
	}
	return c.azureBase + url.PathEscape(upstream) + "/" + path + c.azureQuery[strings.IndexByte(c.azureQuery, '?'):]
}

// Do sends one request to the upstream under k with the client's headers
// (Content-Type replaced by contentType when it is not empty) and returns
// the response once a 2xx status arrived; any other status is read and
// mapped to the client's error. The caller closes the body and releases k.
func (c *Client) Do(k *provider.Call, method, u, contentType, accept string, body io.Reader) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(k.Ctx, method, u, body)
	if err != nil {
		return nil, provider.BadResponse(c.name, err)
	}
	hr.Header = c.header.Clone()
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	if body == nil {
		hr.Header.Del("Content-Type")
	}
	if accept != "" {
		hr.Header.Set("Accept", accept)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	k.Touch()
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, provider.FromStatus(c.name, resp.StatusCode, resp.Header, c.vendorError(b))
	}
	return resp, nil
}

// Name is the provider's name from the config.
func (c *Client) Name() string { return c.name }

// MaxBody is the largest upstream answer the client reads whole.
func (c *Client) MaxBody() int64 { return c.maxBody }
