package retry_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/steadyhttp/steady/retry"
)

// cannedRT is an in-memory base RoundTripper: it reads and closes the request body, as a real
// transport does, and answers 200 with a short body. It reuses one response so that the base
// itself allocates nothing and the benchmark shows only the layers above it. Not for concurrent use.
type cannedRT struct {
	resp http.Response
	body strings.Reader
}

func (c *cannedRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	c.body.Reset("ok")
	c.resp = http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(&c.body), ContentLength: 2, Request: req,
	}
	return &c.resp, nil
}

// BenchmarkOverhead measures what each retry layer adds to a request that succeeds at once, over
// the bare base RoundTripper, all driven the way their users drive them: http.Client.Do with an
// *http.Request for bare and steady, retryablehttp.Client.Do with a *retryablehttp.Request (its
// logger off) for go-retryablehttp. Bodies are given as *bytes.Reader to all three. Compare with
// benchstat: go test -run '^$' -bench Overhead -benchmem -count 10 ./retry
func BenchmarkOverhead(b *testing.B) {
	payload := bytes.Repeat([]byte("a"), 1024)
	type request struct {
		name   string
		method string
		body   []byte
	}
	requests := []request{{"GET", http.MethodGet, nil}, {"POST1KiB", http.MethodPost, payload}}
	reader := func(p []byte) io.Reader {
		if p == nil {
			return nil
		}
		return bytes.NewReader(p)
	}
	const url = "http://api.test/items"

	stdClient := func(b *testing.B, rt http.RoundTripper, r request) {
		c := &http.Client{Transport: rt}
		b.ReportAllocs()
		for b.Loop() {
			req, err := http.NewRequest(r.method, url, reader(r.body))
			if err != nil {
				b.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}

	b.Run("bare", func(b *testing.B) {
		for _, r := range requests {
			b.Run(r.name, func(b *testing.B) { stdClient(b, &cannedRT{}, r) })
		}
	})
	b.Run("steady", func(b *testing.B) {
		for _, r := range requests {
			b.Run(r.name, func(b *testing.B) {
				tr, err := retry.NewTransport(&cannedRT{})
				if err != nil {
					b.Fatal(err)
				}
				stdClient(b, tr, r)
			})
		}
	})
	b.Run("retryablehttp", func(b *testing.B) {
		for _, r := range requests {
			b.Run(r.name, func(b *testing.B) {
				c := retryablehttp.NewClient()
				c.Logger = nil
				c.HTTPClient = &http.Client{Transport: &cannedRT{}}
				b.ReportAllocs()
				for b.Loop() {
					req, err := retryablehttp.NewRequest(r.method, url, reader(r.body))
					if err != nil {
						b.Fatal(err)
					}
					resp, err := c.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			})
		}
	})
}

// BenchmarkRoundTrip isolates the retry layer's own cost: RoundTrip on a prepared request (its
// body rewound in place each time) straight onto the in-memory base, without http.Client or
// request construction around it.
func BenchmarkRoundTrip(b *testing.B) {
	payload := bytes.Repeat([]byte("a"), 1024)
	for _, impl := range []string{"bare", "steady"} {
		for _, r := range []struct {
			name, method string
			body         []byte
		}{{"GET", http.MethodGet, nil}, {"POST1KiB", http.MethodPost, payload}} {
			b.Run(impl+"/"+r.name, func(b *testing.B) {
				var rt http.RoundTripper = &cannedRT{}
				if impl == "steady" {
					tr, err := retry.NewTransport(rt)
					if err != nil {
						b.Fatal(err)
					}
					rt = tr
				}
				body := bytes.NewReader(r.body)
				req, err := http.NewRequest(r.method, "http://api.test/items", nil)
				if err != nil {
					b.Fatal(err)
				}
				if r.body != nil {
					req.Body = io.NopCloser(body)
					req.ContentLength = int64(len(r.body))
					req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(r.body)), nil }
				}
				b.ReportAllocs()
				for b.Loop() {
					body.Reset(r.body)
					resp, err := rt.RoundTrip(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			})
		}
	}
}
