package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// upstreamProxy forwards admitted requests to a real upstream (-upstream).
type upstreamProxy struct {
	handler   *httputil.ReverseProxy
	transport *http.Transport
}

// newUpstreamProxy returns a reverse proxy to target that logs failures to stderr and answers
// them with 502. Close its idle connections with close when the server has stopped.
func newUpstreamProxy(target *url.URL, stderr io.Writer) *upstreamProxy {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client is gone; nobody to answer
			}
			fmt.Fprintf(stderr, "testserver: upstream %s: %s %s: %v\n", target.Redacted(), r.Method, r.URL.Path, err)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "bad gateway: upstream unreachable\n")
		},
	}
	return &upstreamProxy{handler: p, transport: tr}
}

// close closes the proxy's idle upstream connections.
func (p *upstreamProxy) close() { p.transport.CloseIdleConnections() }
