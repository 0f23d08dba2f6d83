package client

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// memoryTransport answers every request at once with a small canned response, reading and closing
// the request body as a real transport would. With quota set, the response carries the
// X-RateLimit-* triple of an ample quota, as GitHub's and most APIs' successes do.
type memoryTransport struct{ quota bool }

func (m memoryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	h := http.Header{}
	if m.quota {
		h = http.Header{
			"X-Ratelimit-Limit": {"1000000"}, "X-Ratelimit-Remaining": {"999000"}, "X-Ratelimit-Reset": {"3600"},
		}
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: req,
	}, nil
}

// BenchmarkOverhead measures what each stack adds per request over the bare base transport when
// nothing is retried or throttled: steady's client with no options (which learns a pace per host)
// and without a pace (the stack's fixed cost), and go-retryablehttp's client
// with its defaults (logger off), each driven the way its users drive it. Beside the wall time
// per request it reports the process's CPU time per request (cpu-ns/op, where the system tells it,
// the garbage collector's included), which the load of other processes on a shared machine does
// not stretch. Compare the implementations side by side with benchstat, over the in-memory base
// (the stacks' own cost):
//
//	go test -run '^$' -bench 'Overhead/.*/memory/(GET|POST)' -benchmem -count 10 ./client > new.txt
//	benchstat -col /impl new.txt
func BenchmarkOverhead(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()

	for _, base := range []struct {
		name string
		rt   func() http.RoundTripper
		url  string
	}{
		{"memory", func() http.RoundTripper { return memoryTransport{} }, "http://api.test/items"},
		{"loopback", func() http.RoundTripper { return srv.Client().Transport.(*http.Transport).Clone() }, srv.URL + "/items"},
	} {
		for _, method := range []string{"GET", "POST1KiB"} {
			var body []byte
			verb := http.MethodGet
			if method == "POST1KiB" {
				body, verb = payload, http.MethodPost
			}
			do := loopRoundTrips
			newRequest := func() *http.Request {
				var r io.Reader
				if body != nil {
					r = bytes.NewReader(body)
				}
				req, err := http.NewRequest(verb, base.url, r)
				if err != nil {
					b.Fatal(err)
				}
				return req
			}
			b.Run("impl=bare/base="+base.name+"/req="+method, func(b *testing.B) {
				c := &http.Client{Transport: base.rt()}
				do(b, func() (*http.Response, error) { return c.Do(newRequest()) })
			})
			b.Run("impl=steady/base="+base.name+"/req="+method, func(b *testing.B) {
				c := New(WithBase(base.rt())) // the default: a learned pace per host
				do(b, func() (*http.Response, error) { return c.Do(newRequest()) })
			})
			b.Run("impl=steady-nopace/base="+base.name+"/req="+method, func(b *testing.B) {
				c := New(WithBase(base.rt()), WithoutPace()) // the stack's fixed cost
				do(b, func() (*http.Response, error) { return c.Do(newRequest()) })
			})
			b.Run("impl=retryablehttp/base="+base.name+"/req="+method, func(b *testing.B) {
				rc := retryablehttp.NewClient()
				rc.Logger = nil
				rc.HTTPClient = &http.Client{Transport: base.rt()}
				do(b, func() (*http.Response, error) {
					var r any
					if body != nil {
						r = bytes.NewReader(body)
					}
					req, err := retryablehttp.NewRequest(verb, base.url, r)
					if err != nil {
						return nil, err
					}
					return rc.Do(req)
				})
			})
		}
	}
}

// BenchmarkTransportOverhead measures the stack alone: its RoundTrip called directly over the
// in-memory transport with one request reused, without http.Client and without building a request
// per call, so that little but the stack's own work is left beside the bare transport's. It is
// BenchmarkOverhead's steady GET less the client's share; the resp=quota cases answer with an
// ample X-RateLimit-* quota, which the default stack reads on every response; the req=auth cases
// send an Authorization header, which the default key hashes. go-retryablehttp's
// stack is there as its users install it as a RoundTripper (retryablehttp.RoundTripper, defaults,
// logger off), which goes through an http.Client of its own: its design's cost. Run it with -cpu 1
// on a shared machine (the garbage collector then takes its CPU time on the benchmark's own thread):
//
//	go test -run '^$' -bench TransportOverhead -benchmem -cpu 1 -count 10 ./client > new.txt
//	benchstat -col /impl new.txt
func BenchmarkTransportOverhead(b *testing.B) {
	req, err := http.NewRequest(http.MethodGet, "http://api.test/items", nil)
	if err != nil {
		b.Fatal(err)
	}
	auth := req.Clone(req.Context()) // as an API's client sends them: with its credential
	auth.Header.Set("Authorization", "Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a")
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
		req  *http.Request
	}{
		{"impl=bare", memoryTransport{}, req},
		{"impl=steady", NewTransport(memoryTransport{}), req},
		{"impl=steady-nopace", NewTransport(memoryTransport{}, WithoutPace()), req},
		{"impl=retryablehttp", retryableTransport(memoryTransport{}), req},
		{"impl=bare/resp=quota", memoryTransport{quota: true}, req},
		{"impl=steady/resp=quota", NewTransport(memoryTransport{quota: true}), req},
		{"impl=retryablehttp/resp=quota", retryableTransport(memoryTransport{quota: true}), req},
		{"impl=bare/req=auth", memoryTransport{}, auth},
		{"impl=steady/req=auth", NewTransport(memoryTransport{}), auth},
		{"impl=retryablehttp/req=auth", retryableTransport(memoryTransport{}), auth},
	} {
		b.Run(c.name, func(b *testing.B) {
			loopRoundTrips(b, func() (*http.Response, error) { return c.rt.RoundTrip(c.req) })
		})
	}
}

// retryableTransport is go-retryablehttp's RoundTripper over base, with its defaults and no logger.
func retryableTransport(base http.RoundTripper) http.RoundTripper {
	rc := retryablehttp.NewClient()
	rc.Logger = nil
	rc.HTTPClient = &http.Client{Transport: base}
	return &retryablehttp.RoundTripper{Client: rc}
}

// loopRoundTrips runs send for the benchmark's loop, draining and closing each response, and
// reports the allocations and, where the process's CPU time can be read, the CPU time per request.
func loopRoundTrips(b *testing.B, send func() (*http.Response, error)) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		resp, err := send()
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if cpu1 := cpuTime(); cpu0 >= 0 && cpu1 >= 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
