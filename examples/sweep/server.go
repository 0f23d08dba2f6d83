package main

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// clientHeader carries the index of the simulated client that sent a request, so that the server
// can count each client's admissions (a real server would see one API key).
const clientHeader = "Sweep-Client"

// lieFactor is how far a lying server over-claims: it declares ten times its real limit, and ten
// times its remaining quota plus ten (so it never declares the quota spent).
const lieFactor = 10

// phase is one stretch of a server's life: from from on, lim decides with rule.
type phase struct {
	from time.Time
	rule testserver.Rule
	lim  *testserver.Limiter
}

// rulesFor returns the rules of a server kind's phases and when each starts after the run's start:
// one rule for the whole run, or, for the changing server, the limit, half of it from a quarter of
// the nominal run (the run's requests at the limit's rate), and the limit again from half of it.
// Each phase starts with a fresh quota, as testserver's SetRules gives a rule whose limit changed.
func rulesFor(kind string, l limitSpec, nominal time.Duration) ([]testserver.Rule, []time.Duration, error) {
	rule := testserver.Rule{Limit: l.Limit, Window: l.Window}
	switch kind {
	case algorithm.NameTokenBucket, algorithm.NameLeakyBucket:
		rule.Algorithm, rule.Burst = kind, l.Burst()
	case algorithm.NameFixedWindow, algorithm.NameSlidingLog, algorithm.NameSlidingWindow:
		rule.Algorithm = kind
	case serverCountDenied:
		rule.Algorithm, rule.CountDenied = algorithm.NameSlidingWindow, true
	case serverChanging:
		rule.Algorithm, rule.Burst = algorithm.NameTokenBucket, l.Burst()
		half := halved(rule)
		return []testserver.Rule{rule, half, rule}, []time.Duration{0, nominal / 4, nominal / 2}, nil
	default:
		return nil, nil, fmt.Errorf("unknown server kind %q (want one of %v)", kind, serverKinds)
	}
	return []testserver.Rule{rule}, []time.Duration{0}, nil
}

// halved returns rule at half its rate: half the limit (and burst) per window, or, for an odd
// limit, the limit per two windows.
func halved(r testserver.Rule) testserver.Rule {
	if r.Limit%2 == 0 {
		r.Limit /= 2
	} else {
		r.Window *= 2
	}
	r.Burst = r.Limit
	return r
}

// simServer is a testserver limiter (or a schedule of them) behind the headers of its mode, in its
// dialect when honest. It counts every decision: attempts and refusals (429s, or the persona's
// throttle status: GitHub's 403), in all and after the warm-up, and each client's admissions; it
// counts from the limiter's decision (testserver.Result.Allowed), not from the status it answers.
// It is safe for concurrent use.
type simServer struct {
	headers string
	phases  []phase
	warmAt  time.Time

	mu                       sync.Mutex
	attempts, denied         int64
	warmAttempts, warmDenied int64
	admitted                 []int64 // per client
	firstDone                bool
	admittedAtFirstDone      []int64
}

// newSimServer builds the server of the header mode headers for the given rules starting at start;
// with honest headers it answers in dialect (dialectTestserver or "": testserver's own headers;
// else testserver.WithDialect's persona of that name, with its statuses, headers and bodies; the
// rules name their algorithm, so the persona's default algorithm does not apply).
func newSimServer(headers, dialect string, rules []testserver.Rule, offsets []time.Duration, start time.Time, clients int, warmup time.Duration) (*simServer, error) {
	s := &simServer{headers: headers, warmAt: start.Add(warmup), admitted: make([]int64, clients)}
	for i, r := range rules {
		opts := []testserver.Option{testserver.WithRequestHook(s.record)}
		switch {
		case headers != headersHonest:
			opts = append(opts, testserver.WithHeaders(false))
		case dialect != "" && dialect != dialectTestserver:
			opts = append(opts, testserver.WithDialect(dialect))
		}
		lim, err := testserver.NewLimiter([]testserver.Rule{r}, opts...)
		if err != nil {
			s.close()
			return nil, err
		}
		s.phases = append(s.phases, phase{from: start.Add(offsets[i]), rule: r, lim: lim})
	}
	return s, nil
}

func (s *simServer) close() {
	for _, p := range s.phases {
		_ = p.lim.Close()
	}
}

// limiterAt returns the limiter deciding at now.
func (s *simServer) limiterAt(now time.Time) *testserver.Limiter {
	lim := s.phases[0].lim
	for _, p := range s.phases[1:] {
		if !now.Before(p.from) {
			lim = p.lim
		}
	}
	return lim
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

func (s *simServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lim := s.limiterAt(time.Now())
	if s.headers != headersLying {
		lim.Middleware(ok).ServeHTTP(w, r)
		return
	}
	res, err := lim.Decide(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	s.record(time.Now(), r, res)
	rr := res.Rules[0]
	ratelimitheader.Write(w.Header(), ratelimitheader.Fields{
		Policy: rr.Rule, Limit: rr.Limit * lieFactor, Window: rr.Window,
		Remaining: rr.Remaining*lieFactor + lieFactor, Reset: rr.Reset,
	})
	if !res.Allowed {
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// record counts one decision.
func (s *simServer) record(now time.Time, r *http.Request, res testserver.Result) {
	c, _ := strconv.Atoi(r.Header.Get(clientHeader))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	warm := !now.Before(s.warmAt)
	if warm {
		s.warmAttempts++
	}
	if !res.Allowed {
		s.denied++
		if warm {
			s.warmDenied++
		}
		return
	}
	if c >= 0 && c < len(s.admitted) {
		s.admitted[c]++
	}
}

// clientDone notes that a client sent its last request: the first time, each client's admissions
// so far are what the fairness figures compare (until then every client wanted all it could get).
func (s *simServer) clientDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.firstDone {
		s.firstDone = true
		s.admittedAtFirstDone = append([]int64(nil), s.admitted...)
	}
}
