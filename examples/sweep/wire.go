package main

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/internal/ctxsleep"
)

// wire is the network between one client and the server: a request reaches the server leg after
// it leaves, and its answer comes back leg after the server answered (leg is half the round
// trip; the server answers at once). next carries the request (pipenet's in-memory connections in
// virtual time, loopback sockets in real time). It is safe for concurrent use.
type wire struct {
	next http.RoundTripper
	leg  time.Duration
}

// RoundTrip implements http.RoundTripper. A request whose context ends on the way out is not sent
// (the error says so and the body is closed); on the way back, the response is returned late but
// whole.
func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := ctxsleep.Sleep(req.Context(), w.leg); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp, err := w.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	time.Sleep(w.leg)
	return resp, nil
}
