package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Exit statuses of run.
const (
	exitOK         = 0
	exitFailed     = 1 // a run could not start, the output could not be written, or a signal
	exitUsage      = 2
	exitGoalMissed = 3 // -check and a steady client missed a goal
)

// run is the whole command, in-process: it parses args, runs every (algorithm, header mode,
// client) in turn and prints the table on stdout (or one JSON object per row with -json, as each
// run ends). Progress goes to stderr. When ctx ends (a signal) it stops after the current run and
// still prints the rows it has.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args)
	switch {
	case errors.Is(err, errHelp):
		printUsage(stderr)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "goodput: %v\n", err)
		return exitUsage
	}
	mach := machine()
	fmt.Fprintf(stderr, "goodput: machine: %s\n", mach)

	var rows []row
	var werr error
	runErr := runAll(ctx, cfg, stderr, func(r row) {
		rows = append(rows, r)
		if cfg.json && werr == nil {
			werr = writeJSON(stdout, r)
		}
	})
	switch {
	case cfg.json:
	case cfg.markdown:
		werr = writeMarkdown(stdout, cfg, mach, rows)
	default:
		werr = writeText(stdout, cfg, mach, rows)
	}
	if werr != nil {
		fmt.Fprintf(stderr, "goodput: writing the table: %v\n", werr)
		return exitFailed
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "goodput: %v\n", runErr)
		return exitFailed
	}
	if cfg.check {
		missed := false
		for i := range rows {
			if rows[i].missed() {
				fmt.Fprintf(stderr, "goodput: goal missed: %s, headers %s, %s: %s\n",
					rows[i].Algorithm, headersWord(rows[i].Headers), rows[i].Client, rows[i].Goal)
				missed = true
			}
		}
		if missed {
			return exitGoalMissed
		}
	}
	return exitOK
}
