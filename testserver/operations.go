package testserver

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Headers that name the status resource of a long-running operation (Operations.Header).
const (
	HeaderOperationLocation   = "Operation-Location"
	HeaderAzureAsyncOperation = "Azure-AsyncOperation"
	HeaderLocation            = "Location"
)

// OperationsPath is the path under which an OperationsHandler serves its status resources.
const OperationsPath = "/operations/"

// Operation states in an OperationsHandler's status body (the Azure spelling).
const (
	OperationRunning   = "Running"
	OperationSucceeded = "Succeeded"
	OperationFailed    = "Failed"
)

// Operations configures an OperationsHandler, a simulated long-running-operation API. The zero
// value is usable: operations that finish at once, announced with Operation-Location and no
// Retry-After.
type Operations struct {
	// Duration is how long each operation runs after it was started.
	Duration time.Duration
	// RetryAfter is the Retry-After sent with the 202 and with every status of a running operation,
	// rounded up to whole seconds; 0 sends none.
	RetryAfter time.Duration
	// Header names the status resource in the 202: HeaderOperationLocation (the default),
	// HeaderAzureAsyncOperation or HeaderLocation.
	Header string
	// Fail makes every operation end Failed instead of Succeeded.
	Fail bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// OperationStatus is the JSON body of a status resource, and of the 202 that starts an operation.
type OperationStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"` // OperationRunning, OperationSucceeded or OperationFailed
	// Result is the operation's result once it Succeeded: the method and path that started it.
	Result string `json:"result,omitempty"`
	// Error says why it Failed.
	Error string `json:"error,omitempty"`
}

// OperationsHandler is an http.Handler simulating an API of long-running operations: a request of
// any method but GET to a path outside OperationsPath starts an operation and is answered 202
// Accepted with the absolute URL of its status resource (OperationsPath + id) in Operations.Header
// (and Retry-After when set); a GET of that URL answers 200 with an OperationStatus, Running until
// Operations.Duration has passed since the start, then Succeeded (or Failed); an unknown id is
// answered 404, a GET elsewhere 405. Put it behind a Server's limiter with WithHandler, so that the
// polls are rate-limited too. It is safe for concurrent use.
type OperationsHandler struct {
	cfg   Operations
	mu    sync.Mutex
	ops   map[string]time.Time // id -> when it started
	next  atomic.Int64
	polls atomic.Int64
}

// NewOperations returns an OperationsHandler configured by o, or an *OptionError matching
// ErrInvalidOption for a negative duration or an unknown header.
func NewOperations(o Operations) (*OperationsHandler, error) {
	switch {
	case o.Duration < 0:
		return nil, &OptionError{Option: "Operations.Duration", Value: o.Duration.String(), Err: fmt.Errorf("%w: must not be negative", ErrInvalidOption)}
	case o.RetryAfter < 0:
		return nil, &OptionError{Option: "Operations.RetryAfter", Value: o.RetryAfter.String(), Err: fmt.Errorf("%w: must not be negative", ErrInvalidOption)}
	}
	switch o.Header {
	case "":
		o.Header = HeaderOperationLocation
	case HeaderOperationLocation, HeaderAzureAsyncOperation, HeaderLocation:
	default:
		return nil, &OptionError{Option: "Operations.Header", Value: o.Header, Err: fmt.Errorf("%w: not a status header", ErrInvalidOption)}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &OperationsHandler{cfg: o, ops: make(map[string]time.Time)}, nil
}

// Started reports how many operations were started.
func (h *OperationsHandler) Started() int64 { return h.next.Load() }

// Polls reports how many GETs of a status resource were answered.
func (h *OperationsHandler) Polls() int64 { return h.polls.Load() }

// ServeHTTP starts an operation or answers its status; see OperationsHandler.
func (h *OperationsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := h.cfg.Now()
	id, isStatus := strings.CutPrefix(r.URL.Path, OperationsPath)
	switch {
	case !isStatus && r.Method != http.MethodGet:
		h.start(w, r, now)
	case isStatus && r.Method == http.MethodGet:
		h.status(w, id, now)
	default:
		w.Header().Set("Allow", "POST, PUT, PATCH, DELETE (to start); GET "+OperationsPath+"{id}")
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (h *OperationsHandler) start(w http.ResponseWriter, r *http.Request, now time.Time) {
	id := strconv.FormatInt(h.next.Add(1), 10)
	h.mu.Lock()
	h.ops[id] = now
	h.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set(h.cfg.Header, scheme+"://"+r.Host+OperationsPath+id)
	h.retryAfter(w)
	writeStatus(w, http.StatusAccepted, OperationStatus{ID: id, Status: OperationRunning})
}

func (h *OperationsHandler) status(w http.ResponseWriter, id string, now time.Time) {
	h.polls.Add(1)
	h.mu.Lock()
	started, ok := h.ops[id]
	h.mu.Unlock()
	if !ok {
		http.Error(w, "no such operation", http.StatusNotFound)
		return
	}
	st := OperationStatus{ID: id, Status: OperationRunning}
	switch {
	case now.Sub(started) < h.cfg.Duration:
		h.retryAfter(w)
	case h.cfg.Fail:
		st.Status, st.Error = OperationFailed, "the simulated operation failed"
	default:
		st.Status, st.Result = OperationSucceeded, "operation "+id+" done"
	}
	writeStatus(w, http.StatusOK, st)
}

func (h *OperationsHandler) retryAfter(w http.ResponseWriter) {
	if d := h.cfg.RetryAfter; d > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10))
	}
}

func writeStatus(w http.ResponseWriter, code int, st OperationStatus) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}
