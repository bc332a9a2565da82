package responses

// Background reports whether the request asks the vendor to run the
// response in the background ("background": true): the vendor answers at
// once with the response queued and finishes it later.
func (r *Request) Background() bool { return r.w.Background != nil && *r.w.Background }
