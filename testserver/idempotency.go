package testserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// HeaderIdempotencyKey is the request header [Idempotency] honours (IETF draft "The
// Idempotency-Key HTTP Header Field", as Stripe and others use it).
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderIdempotentReplayed marks a response [Idempotency] replayed from the first answer to its
// key; its value is "true" (Stripe's header).
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// DefaultIdempotencyKeys is the number of keys an [Idempotency] remembers by default: more than
// the requests of any batch a test sends, at a few hundred bytes each plus the answers' bodies.
const DefaultIdempotencyKeys = 100_000

// maxIdempotentBody bounds the request body an [Idempotency] reads to fingerprint a request, and
// the response body it keeps to replay: a test double's payloads are small, and a bound keeps a
// misbehaving client from holding the server's memory. A larger request is answered 413; a larger
// answer is passed on but not kept (the next request with its key is executed again).
const maxIdempotentBody = 1 << 20

// Idempotency honours the Idempotency-Key request header in front of a handler, as APIs that
// accept it do: the first request with a key is passed to the handler and its answer (status,
// headers, body) kept; a later request with the same key gets that answer replayed, marked
// Idempotent-Replayed: true, and never reaches the handler. So a client that sends a POST again
// (a retry after a lost answer, a batch resumed after a crash) has it processed once, and a test
// can count at the server how often each key was executed.
//
// Following the IETF draft:
//   - a request whose key is still being processed by the handler gets 409 Conflict;
//   - a request that reuses a key with a different method, URL or body gets 422 Unprocessable
//     Content;
//   - a request without the header passes through untouched.
//
// An answer with a 5xx status is not kept (the request failed, or was cut short before it was
// processed): the key is forgotten and the next request with it is executed. Any other answer is
// kept even when its client is gone by then, since the handler has done its work: the client's
// next try gets it replayed.
// Request bodies above 1 MiB are answered 413, and answers above 1 MiB are passed on but not kept.
// The oldest keys are forgotten beyond the capacity given to [NewIdempotency].
//
// An Idempotency is safe for concurrent use.
type Idempotency struct {
	maxKeys int

	mu      sync.Mutex
	entries map[string]*idempotentEntry
	order   []string // keys in the order first seen, for forgetting the oldest; may hold forgotten keys

	executed, replayed, conflicts, mismatches atomic.Int64
}

// IdempotencyStats are an [Idempotency]'s counters.
type IdempotencyStats struct {
	// Executed counts requests with a key that were passed to the handler (once per key, unless an
	// answer was not kept).
	Executed int64 `json:"executed"`
	// Replayed counts requests answered with the kept answer of their key.
	Replayed int64 `json:"replayed"`
	// Conflicts counts requests answered 409 because their key was still being processed.
	Conflicts int64 `json:"conflicts"`
	// Mismatches counts requests answered 422 because their key came with a different request.
	Mismatches int64 `json:"mismatches"`
	// Keys is the number of keys remembered now.
	Keys int `json:"keys"`
}

// idempotentEntry is one key's state: in progress until done, then the answer to replay.
type idempotentEntry struct {
	fingerprint [sha256.Size]byte
	done        bool
	status      int
	header      http.Header
	body        []byte
}

// NewIdempotency returns an Idempotency that remembers up to maxKeys keys (0 means
// [DefaultIdempotencyKeys]); a negative maxKeys gives an error matching [ErrInvalidOption].
func NewIdempotency(maxKeys int) (*Idempotency, error) {
	if maxKeys < 0 {
		return nil, &OptionError{Option: "NewIdempotency", Value: fmt.Sprint(maxKeys),
			Err: fmt.Errorf("%w: must not be negative", ErrInvalidOption)}
	}
	if maxKeys == 0 {
		maxKeys = DefaultIdempotencyKeys
	}
	return &Idempotency{maxKeys: maxKeys, entries: map[string]*idempotentEntry{}}, nil
}

// Stats returns a snapshot of the counters.
func (i *Idempotency) Stats() IdempotencyStats {
	i.mu.Lock()
	keys := len(i.entries)
	i.mu.Unlock()
	return IdempotencyStats{Executed: i.executed.Load(), Replayed: i.replayed.Load(),
		Conflicts: i.conflicts.Load(), Mismatches: i.mismatches.Load(), Keys: keys}
}

// Middleware wraps next: requests carrying an Idempotency-Key are executed once per key, and
// their first kept answer is replayed to the others (see [Idempotency]).
func (i *Idempotency) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys, ok := r.Header[HeaderIdempotencyKey]
		if !ok || len(keys) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		key := keys[0]
		body, err := readBounded(r.Body, maxIdempotentBody)
		if err != nil {
			writeIdempotencyProblem(w, http.StatusRequestEntityTooLarge, "a request with an Idempotency-Key must have a body of at most 1 MiB: "+err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fp := fingerprint(r, body)

		e, answer := i.begin(key, fp)
		switch answer {
		case idempotentConflict:
			i.conflicts.Add(1)
			writeIdempotencyProblem(w, http.StatusConflict, "a request with this Idempotency-Key is still being processed")
			return
		case idempotentMismatch:
			i.mismatches.Add(1)
			writeIdempotencyProblem(w, http.StatusUnprocessableEntity, "this Idempotency-Key was used with a different request")
			return
		case idempotentReplay:
			i.replayed.Add(1)
			h := w.Header()
			for k, v := range e.header {
				h[k] = append([]string(nil), v...)
			}
			h.Set(HeaderIdempotentReplayed, "true")
			w.WriteHeader(e.status)
			_, _ = w.Write(e.body)
			return
		}
		i.executed.Add(1)
		rec := &recordingWriter{ResponseWriter: w}
		keep := false
		defer func() { i.end(key, e, rec, keep) }()
		next.ServeHTTP(rec, r)
		keep = rec.status() < 500 && !rec.overflow
	})
}

// idempotentAnswer is what begin decided for a request.
type idempotentAnswer int

const (
	idempotentExecute  idempotentAnswer = iota // a new key: pass the request on
	idempotentReplay                           // a kept answer: replay it
	idempotentConflict                         // the key is in progress
	idempotentMismatch                         // the key came with a different request
)

// begin looks key up: a new key is entered as in progress (and returned), a known one decides the
// answer.
func (i *Idempotency) begin(key string, fp [sha256.Size]byte) (*idempotentEntry, idempotentAnswer) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if e, ok := i.entries[key]; ok {
		switch {
		case e.fingerprint != fp:
			return nil, idempotentMismatch
		case !e.done:
			return nil, idempotentConflict
		}
		return e, idempotentReplay
	}
	e := &idempotentEntry{fingerprint: fp}
	i.entries[key] = e
	i.order = append(i.order, key)
	i.forgetOldest()
	return e, idempotentExecute
}

// forgetOldest forgets the oldest keys beyond the capacity. i.mu is held.
func (i *Idempotency) forgetOldest() {
	for len(i.entries) > i.maxKeys && len(i.order) > 0 {
		delete(i.entries, i.order[0])
		i.order = i.order[1:]
	}
	if len(i.order) > 2*i.maxKeys { // keys forgotten early (answers not kept) pile up here
		live := make([]string, 0, len(i.entries))
		for _, k := range i.order {
			if _, ok := i.entries[k]; ok {
				live = append(live, k)
			}
		}
		i.order = live
	}
}

// end keeps the answer recorded for e, or forgets the key when it is not to be kept. An entry
// already forgotten (beyond the capacity) stays forgotten.
func (i *Idempotency) end(key string, e *idempotentEntry, rec *recordingWriter, keep bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.entries[key] != e {
		return
	}
	if !keep {
		delete(i.entries, key)
		return
	}
	e.done, e.status, e.header, e.body = true, rec.status(), rec.header(), rec.body.Bytes()
}

// fingerprint identifies a request's method, URL and body.
func fingerprint(r *http.Request, body []byte) [sha256.Size]byte {
	h := sha256.New()
	_, _ = io.WriteString(h, r.Method+" "+r.URL.RequestURI()+"\n")
	_, _ = h.Write(body)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// readBounded reads r (which may be nil) to its end, failing when it holds more than limit bytes.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("body longer than %d bytes", limit)
	}
	return b, nil
}

// recordingWriter passes an answer on and records it (status, headers, up to maxIdempotentBody of
// its body).
type recordingWriter struct {
	http.ResponseWriter
	code     int
	snapshot http.Header
	body     bytes.Buffer
	overflow bool
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
		w.snapshot = w.ResponseWriter.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.overflow {
		if w.body.Len()+len(p) > maxIdempotentBody {
			w.overflow = true
		} else {
			w.body.Write(p)
		}
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the answer's status: 200 when the handler wrote nothing.
func (w *recordingWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// header is the answer's header as it was sent.
func (w *recordingWriter) header() http.Header {
	if w.snapshot == nil {
		return w.ResponseWriter.Header().Clone()
	}
	return w.snapshot
}

// writeIdempotencyProblem answers status with a problem+json body.
func writeIdempotencyProblem(w http.ResponseWriter, status int, detail string) {
	body, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{ProblemType, http.StatusText(status), status, detail})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
