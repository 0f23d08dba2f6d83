package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far a run is. Its methods are safe for concurrent use.
type progress interface {
	// done counts one finished request.
	done()
	// finish ends the display.
	finish()
}

// redrawEvery is the shortest interval between two redraws of the bar: ten a second is as often as
// anyone reads it, and keeps a fast batch from spending its time drawing.
const redrawEvery = 100 * time.Millisecond

// newProgress returns a progress bar of n requests (n < 0: not known, a spinner with the count)
// drawn on w when w is a terminal, and a progress that shows nothing otherwise (a file, a pipe, a
// test's buffer), so logs and redirected output never fill with bar redraws. throttled reports the
// throttled answers so far, shown beside the count.
func newProgress(w io.Writer, n int, throttled func() int64) progress {
	if !isTerminal(w) {
		return noProgress{}
	}
	return newBar(w, n, throttled)
}

// newBar returns the bar newProgress draws on a terminal: the count, the rate, the elapsed time and
// (with n known) the ETA, and the throttled answers in its description.
func newBar(w io.Writer, n int, throttled func() int64) *bar {
	return &bar{b: progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(describeThrottled(0)),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("req"),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(redrawEvery),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetSpinnerChangeInterval(0), // no ticking goroutine: done redraws
	), throttled: throttled}
}

// describeThrottled is the bar's description with n throttled answers.
func describeThrottled(n int64) string { return fmt.Sprintf("requests (%d throttled)", n) }

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type noProgress struct{}

func (noProgress) done()   {}
func (noProgress) finish() {}

// bar draws a github.com/schollz/progressbar/v3 bar; it starts no goroutine (its length is known,
// or it is a spinner advanced by done).
type bar struct {
	b         *progressbar.ProgressBar
	throttled func() int64
	mu        sync.Mutex
	shown     int64     // the throttled count in the description
	described time.Time // when the description last changed
}

// done advances the bar, and updates the throttled count at most every redrawEvery (the bar shows
// both at its next redraw).
func (p *bar) done() {
	p.mu.Lock()
	if n := p.throttled(); n != p.shown && time.Since(p.described) >= redrawEvery {
		p.shown, p.described = n, time.Now()
		p.b.Describe(describeThrottled(n))
	}
	p.mu.Unlock()
	_ = p.b.Add(1)
}

func (p *bar) finish() { _ = p.b.Finish() }
