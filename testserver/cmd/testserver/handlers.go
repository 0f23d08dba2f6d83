package main

import (
	"net/http"
	"sync"
)

// handlerSet counts the handlers in progress so that shutdown can wait for every one of them to
// return, and turns away requests that arrive after it was closed. Safe for concurrent use.
type handlerSet struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{}
}

// wrap returns h counted in s.
func (s *handlerSet) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			panic(http.ErrAbortHandler) // net/http closes the connection quietly
		}
		s.n++
		s.mu.Unlock()
		defer s.done()
		h.ServeHTTP(w, r)
	})
}

func (s *handlerSet) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
	if s.n == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// closeAndWait turns away new requests and waits until no handler is running. Call it after the
// http.Server is shut down or closed and the handlers' contexts are cancelled, so it returns
// promptly.
func (s *handlerSet) closeAndWait() {
	s.mu.Lock()
	s.closed = true
	if s.n == 0 {
		s.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	s.idle = idle
	s.mu.Unlock()
	<-idle
}
