package openai

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
)

// The query of GET /v1/responses/{id} is checked parameter by parameter,
// and the vendor gets a query the gateway wrote: the parameters it
// checked, each once, encoded by url.Values. Nothing of the client's raw
// query reaches the vendor, so a parameter the gateway refuses cannot ride
// along in a second copy (stream=false&stream=true), and a parameter it
// does not know (a vendor's api-version, key, ...) is not passed on.

// storedResponseParams are the query parameters of GET /v1/responses/{id}:
// the official ones and the gateway's own "model".
var storedResponseParams = []string{"include", "include[]", "include_obfuscation", "model", "starting_after", "stream"}

// storedResponseQuery checks the raw query of GET /v1/responses/{id} and
// returns the gateway's "model" (the deployment to ask, "" when absent)
// and the query to send upstream: include[] (each value once, in the
// client's order), include_obfuscation and starting_after as written
// canonically. stream=false is the default and is not sent; stream=true is
// refused (the gateway does not replay stored streams).
func storedResponseQuery(raw string) (model string, fwd url.Values, err error) {
	q, perr := url.ParseQuery(raw)
	if perr != nil {
		e := apierr.Invalid("", "The query string is malformed: %s.", perr)
		e.Err = perr
		return "", nil, e
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names) // one answer for one query, whatever the map order
	fwd = url.Values{}
	for _, name := range names {
		vs := q[name]
		if !slices.Contains(storedResponseParams, name) {
			return "", nil, unknownQueryParam(name)
		}
		if name == "include" || name == "include[]" {
			for _, v := range vs {
				if e := contract.Field(contract.Responses, "include[]", v); e != nil {
					return "", nil, e
				}
				if !slices.Contains(fwd["include[]"], v) {
					fwd.Add("include[]", v)
				}
			}
			continue
		}
		if len(vs) > 1 {
			return "", nil, apierr.Invalid(name, "The query parameter '%s' is given %d times; give it once.", name, len(vs))
		}
		v := vs[0]
		switch name {
		case "model":
			if v == "" || len(v) > 256 {
				return "", nil, apierr.Invalid("model", "Invalid 'model': must be a model id of 1 to 256 characters.")
			}
			model = v
		case "stream":
			switch v {
			case "", "false":
			case "true":
				return "", nil, apierr.Invalid("stream", "Streaming a stored response again is not supported by the gateway; omit 'stream'.")
			default:
				return "", nil, apierr.Invalid("stream", "Invalid 'stream': expected true or false, got '%s'.", v)
			}
		case "include_obfuscation":
			b, err := strconv.ParseBool(v)
			if err != nil || (v != "true" && v != "false") {
				return "", nil, apierr.Invalid(name, "Invalid '%s': expected true or false, got '%s'.", name, v)
			}
			fwd.Set(name, strconv.FormatBool(b))
		case "starting_after":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return "", nil, apierr.Invalid(name, "Invalid '%s': expected a sequence number (an integer of 0 or more), got '%s'.", name, v)
			}
			fwd.Set(name, strconv.FormatInt(n, 10))
		}
	}
	return model, fwd, nil
}

// unknownQueryParam is the 400 for a parameter GET /v1/responses/{id} does
// not take, with the right spelling when only its case differs.
func unknownQueryParam(name string) *apierr.Error {
	for _, p := range storedResponseParams {
		if strings.EqualFold(p, name) {
			return apierr.Broken(contract.CodeUnknown, name, "Unrecognized query parameter '%s'; did you mean '%s'? Parameter names are case-sensitive.", name, p)
		}
	}
	return apierr.Broken(contract.CodeUnknown, name, "Unrecognized query parameter '%s'. GET /v1/responses/{id} takes include[], include_obfuscation, starting_after and stream (and the gateway's model).", name)
}
