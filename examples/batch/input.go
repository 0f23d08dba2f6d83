package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// maxLineBytes bounds one input line: far above any request body an API accepts in one call (most
// refuse more than a few MiB), so a longer line is a mistake (a binary file, a missing newline),
// reported as a bad line rather than held in memory.
const maxLineBytes = 16 << 20

// errLineTooLong is the error of an input line longer than maxLineBytes.
var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxLineBytes)

// requestSpec is one request to send, as read from the input or made up by -n.
type requestSpec struct {
	method string
	url    string
	header http.Header
	body   []byte // nil: no body
}

// newRequest builds the request; a body is replayable through GetBody.
func (s *requestSpec) newRequest(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if s.body != nil {
		body = bytes.NewReader(s.body)
	}
	req, err := http.NewRequestWithContext(ctx, s.method, s.url, body)
	if err != nil {
		return nil, err
	}
	for k, v := range s.header {
		req.Header[k] = append([]string(nil), v...)
	}
	return req, nil
}

// item is one request of a run: where it comes from, its identity in the output, and what to send.
type item struct {
	// seq is the input line (1-based), or the request's number (1-based) without -input.
	seq int
	// id is the request's identity in the output, which -resume matches: the request's number
	// without -input; with it, a digest of the line's content and, from its second occurrence on,
	// "-K" for the K-th line with that content, so an input edited between runs (lines added or
	// removed) still matches what was done.
	id   string
	spec requestSpec
	// err says why the line is not a request; spec is then empty.
	err error
}

// source hands out a run's requests one at a time. Its methods are safe for concurrent use.
type source interface {
	// next returns the next request to send, or false when there is none left.
	next() (item, bool)
	// skipped is how many requests were passed over because the output records them as done.
	skipped() int
	// err is why the source stopped early (a read error), or nil.
	err() error
}

// countSource is the batch of -n copies of one request: request i (from 0) sends {"item":i} when
// the method sends a body.
type countSource struct {
	mu     sync.Mutex
	i, n   int
	method string
	target string
	body   bool
	done   map[string]bool
	skip   int
}

func (s *countSource) next() (item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ; s.i < s.n; s.i++ {
		id := strconv.Itoa(s.i + 1)
		if s.done[id] {
			s.skip++
			continue
		}
		it := item{seq: s.i + 1, id: id, spec: s.spec(s.i)}
		s.i++
		return it, true
	}
	return item{}, false
}

// spec is request i: the method to the target, with {"item":i} as a JSON body for methods that
// send one.
func (s *countSource) spec(i int) requestSpec {
	sp := requestSpec{method: s.method, url: s.target, header: http.Header{"User-Agent": {"steady-batch"}}}
	if s.body {
		sp.body = []byte(`{"item":` + strconv.Itoa(i) + `}`)
		sp.header.Set("Content-Type", "application/json")
	}
	return sp
}

func (s *countSource) skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skip
}

func (*countSource) err() error { return nil }

// pending is how many of the n requests the output does not record as done.
func (s *countSource) pending() int {
	n := s.n
	for id := range s.done {
		if i, err := strconv.Atoi(id); err == nil && i >= 1 && i <= s.n {
			n--
		}
	}
	return n
}

// inputSource reads requests from -input, one per line (see parseLine). Blank lines and lines
// starting with # are skipped.
type inputSource struct {
	mu     sync.Mutex
	r      *bufio.Reader
	line   int
	seen   map[[sha256.Size]byte]int
	method string
	base   *url.URL
	done   map[string]bool
	skip   int
	eof    bool
	rerr   error
}

// newInputSource reads requests from r; method is the method of URL lines, base resolves relative
// URLs, and requests whose ids are in done are skipped.
func newInputSource(r io.Reader, method string, base *url.URL, done map[string]bool) *inputSource {
	return &inputSource{r: bufio.NewReaderSize(r, 64<<10), seen: map[[sha256.Size]byte]int{},
		method: method, base: base, done: done}
}

func (s *inputSource) next() (item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.eof {
		raw, err := readLine(s.r, maxLineBytes)
		switch {
		case err == io.EOF:
			s.eof = true
			if len(raw) == 0 {
				return item{}, false
			}
		case errors.Is(err, errLineTooLong):
			s.line++
			return item{seq: s.line, id: "line-" + strconv.Itoa(s.line), err: err}, true
		case err != nil:
			s.eof, s.rerr = true, fmt.Errorf("reading line %d: %w", s.line+1, err)
			return item{}, false
		}
		s.line++
		text := bytes.TrimSpace(raw)
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		id := s.idOf(text)
		if s.done[id] {
			s.skip++
			continue
		}
		spec, perr := parseLine(text, s.method, s.base)
		return item{seq: s.line, id: id, spec: spec, err: perr}, true
	}
	return item{}, false
}

// idOf returns the id of a line with this content: 16 hex digits of its SHA-256, and "-K" for its
// K-th occurrence from the second on.
func (s *inputSource) idOf(text []byte) string {
	sum := sha256.Sum256(text)
	s.seen[sum]++
	id := hex.EncodeToString(sum[:8])
	if k := s.seen[sum]; k > 1 {
		id += "-" + strconv.Itoa(k)
	}
	return id
}

func (s *inputSource) skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skip
}

func (s *inputSource) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rerr
}

// countPending reads the whole input and returns how many requests it holds that are not done:
// what a run from it will send. It reads r to its end; the caller opens the input again to send.
func countPending(r io.Reader, done map[string]bool) (int, error) {
	s := newInputSource(r, http.MethodGet, nil, done)
	n := 0
	for {
		if _, ok := s.next(); !ok {
			return n, s.err()
		}
		n++
	}
}

// readLine reads one line without its end of line ("\n" or "\r\n"). A line longer than limit is
// read to its end and discarded, and errLineTooLong returned. At the end of the input it returns the
// last line (if it had no newline) with io.EOF.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > limit {
			return nil, errLineTooLong
		}
		return line, err
	}
}

// inputRequest is a JSON line of the input.
type inputRequest struct {
	Method  string                  `json:"method"`
	URL     string                  `json:"url"`
	Headers map[string]headerValues `json:"headers"`
	Body    json.RawMessage         `json:"body"`
}

// headerValues is a header's value in a JSON line: a string, or an array of strings.
type headerValues []string

func (h *headerValues) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*h = headerValues{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("a header's value must be a string or an array of strings")
	}
	*h = many
	return nil
}

// parseLine reads one input line as a request. A line that starts with "{" is a JSON object:
//
//	{"method": "POST", "url": "https://api.example.com/items", "headers": {"Authorization": "Bearer x"}, "body": {"name": "a"}}
//
// where only url is required; method defaults to method; headers map names to a string or an
// array of strings; body is a JSON string (sent as it is) or any other JSON value (sent as JSON,
// with Content-Type: application/json unless the headers set one). Any other line is a URL, sent
// with method and no body. Relative URLs are resolved against base; the result must be an http or
// https URL with a host.
func parseLine(text []byte, method string, base *url.URL) (requestSpec, error) {
	if text[0] != '{' {
		u, err := resolve(string(text), base)
		if err != nil {
			return requestSpec{}, err
		}
		return requestSpec{method: method, url: u, header: http.Header{}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var in inputRequest
	if err := dec.Decode(&in); err != nil {
		return requestSpec{}, fmt.Errorf("invalid JSON request: %v", err)
	}
	if dec.More() {
		return requestSpec{}, errors.New("invalid JSON request: more than one value on the line")
	}
	if in.URL == "" {
		return requestSpec{}, errors.New(`invalid JSON request: no "url"`)
	}
	u, err := resolve(in.URL, base)
	if err != nil {
		return requestSpec{}, err
	}
	sp := requestSpec{method: method, url: u, header: http.Header{}}
	if in.Method != "" {
		sp.method = strings.ToUpper(in.Method)
		if !validToken(sp.method) {
			return requestSpec{}, fmt.Errorf("invalid method %q", in.Method)
		}
	}
	for name, vals := range in.Headers {
		if !validToken(name) {
			return requestSpec{}, fmt.Errorf("invalid header name %q", name)
		}
		for _, v := range vals {
			if strings.ContainsAny(v, "\r\n\x00") {
				return requestSpec{}, fmt.Errorf("invalid value of header %q: it holds a line break or NUL", name)
			}
			sp.header.Add(name, v)
		}
	}
	switch body := bytes.TrimSpace(in.Body); {
	case len(body) == 0 || string(body) == "null":
	case body[0] == '"':
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return requestSpec{}, fmt.Errorf("invalid body: %v", err)
		}
		sp.body = []byte(s)
	default:
		sp.body = append([]byte(nil), body...)
		if sp.header.Get("Content-Type") == "" {
			sp.header.Set("Content-Type", "application/json")
		}
	}
	return sp, nil
}

// resolve resolves s against base (when s is relative) and checks it is an http(s) URL with a host.
func resolve(s string, base *url.URL) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("invalid URL %q: %v", s, errors.Unwrap(err))
	}
	if !u.IsAbs() {
		if base == nil {
			return "", fmt.Errorf("invalid URL %q: relative, and no -url to resolve it against", s)
		}
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("invalid URL %q: scheme must be http or https", s)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("invalid URL %q: no host", s)
	}
	return u.String(), nil
}

// validToken reports whether s is an RFC 9110 token, as methods and header names must be.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
