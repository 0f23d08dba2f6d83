package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	drain, ctx, stop := interrupts()
	code := session{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, drain: drain}.run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// interrupts turns SIGINT and SIGTERM into the run's stops: the first closes drain (no new request
// starts; those in flight finish and are recorded), the second cancels ctx (those in flight are
// cancelled; the summary still prints), and any later one kills the process at once. stop ends
// the handling.
func interrupts() (drain <-chan struct{}, ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	d := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-quit:
			return
		}
		close(d)
		fmt.Fprintln(os.Stderr, "\nbatch: interrupted: no new request starts; the requests in flight finish (interrupt again to cancel them)")
		select {
		case <-sigs:
		case <-quit:
			return
		}
		cancel()
		signal.Reset(os.Interrupt, syscall.SIGTERM) // the next one kills
	}()
	return d, ctx, func() { close(quit); signal.Stop(sigs); cancel() }
}
