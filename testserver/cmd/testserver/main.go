package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGHUP is caught before the server starts, so one that arrives right after the listening
	// line reloads the config instead of killing the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first SIGINT/SIGTERM starts the graceful shutdown, a second one kills at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, hup)
	stop()
	signal.Stop(hup)
	os.Exit(code)
}
