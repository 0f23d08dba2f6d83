package retry

import (
	"io"
	"net/http"
)

// DrainLimit is the most the Transport reads from a response body it discards before a retry. A
// body read to its end lets net/http reuse the connection; a longer one is closed unread, which
// costs its connection but never unbounded reading.
const DrainLimit = 64 << 10

// drainAndClose reads at most DrainLimit bytes of body and closes it.
func drainAndClose(body io.ReadCloser) {
	if body == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, DrainLimit)
	_ = body.Close()
}

// closeRequestBody closes req's body, as a RoundTripper must when it returns without sending req.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// attemptRequest returns the request for the next attempt: a clone of prev, the previous attempt's
// request (so headers added for the logical request, such as an Idempotency-Key, carry over), with a
// fresh body from GetBody. prev is not modified.
func attemptRequest(prev *http.Request) (*http.Request, error) {
	r := prev.Clone(prev.Context())
	if prev.GetBody != nil && prev.Body != nil && prev.Body != http.NoBody {
		body, err := prev.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}
