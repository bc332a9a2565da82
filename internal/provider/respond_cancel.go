package provider

import "context"

// ResponseCanceller is implemented by Responders whose vendor can cancel a
// background response (POST /v1/responses/{id}/cancel): the gateway passes
// a client's cancel through and cancels responses that outlive its
// timeout.
type ResponseCanceller interface {
	// CancelResponse cancels the response req.ID (Query is unused) and
	// returns the Response object the vendor answers with, its model shown
	// as Public when it is Upstream; an id the vendor does not know is a
	// 404 *apierr.Error, a response it cannot cancel its error as for
	// other requests.
	CancelResponse(ctx context.Context, req *ResponseGet) (*ResponsesResult, error)
}
