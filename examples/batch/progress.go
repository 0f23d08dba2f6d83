package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
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
	shown     atomic.Int64 // the throttled count in the description
}

func (p *bar) done() {
	if n := p.throttled(); n != p.shown.Swap(n) {
		p.b.Describe(describeThrottled(n))
	}
	_ = p.b.Add(1)
}

func (p *bar) finish() { _ = p.b.Finish() }
