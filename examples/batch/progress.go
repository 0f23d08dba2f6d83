package main

import (
	"io"
	"os"
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

// newProgress returns a progress bar of n requests drawn on w when w is a terminal, and a
// progress that shows nothing otherwise (a file, a pipe, a test's buffer), so logs and
// redirected output never fill with bar redraws.
func newProgress(w io.Writer, n int) progress {
	if !isTerminal(w) {
		return noProgress{}
	}
	return &bar{progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("requests"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("req"),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type noProgress struct{}

func (noProgress) done()   {}
func (noProgress) finish() {}

// bar draws a github.com/schollz/progressbar/v3 bar; it starts no goroutine (its length is known).
type bar struct{ b *progressbar.ProgressBar }

func (p *bar) done()   { _ = p.b.Add(1) }
func (p *bar) finish() { _ = p.b.Finish() }
