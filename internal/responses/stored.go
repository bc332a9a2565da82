package responses

// Stored reports whether the vendor keeps the response it creates: the
// Responses API stores by default, so only an explicit "store": false
// opts out.
func (r *Request) Stored() bool { return r.w.Store == nil || *r.w.Store }

// PreviousResponseID is the request's previous_response_id, "" when absent.
func (r *Request) PreviousResponseID() string {
	if r.w.PreviousResponseID == nil {
		return ""
	}
	return *r.w.PreviousResponseID
}
