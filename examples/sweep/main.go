package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run parses args and runs the sweep (or the real-time check) inside testing.Main: the virtual
// time of testing/synctest is reached only through a *testing.T, and testing.Main gives a plain
// program one. The sweep's function ends the process itself, so testing prints nothing of its own.
// It returns the exit status: 0 when the run went through, 1 when a run could not be made, 2 on a
// bad command line. (Missed goals are results, reported in the output, not failures.)
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "sweep:", err)
		}
		return 2
	}
	if o.trace {
		learnerTrace = stderr
	}
	os.Args = os.Args[:1] // testing parses its own flags from os.Args; the sweep's are already read
	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "Sweep", F: func(t *testing.T) {
			os.Exit(sweepMain(t, o, stdout, stderr))
		}}}, nil, nil)
	return 1 // testing.Main exits; not reached
}

// sweepMain runs what o asks for and returns the exit status.
func sweepMain(t *testing.T, o options, stdout, stderr io.Writer) int {
	if o.realtime {
		if err := realtimeCheck(t, stdout); err != nil {
			fmt.Fprintln(stderr, "sweep:", err)
			return 1
		}
		return 0
	}
	sum, _, err := runGrid(t, o.grid, stdout, o.json)
	if err != nil {
		fmt.Fprintln(stderr, "sweep:", err)
		return 1
	}
	if t.Failed() {
		return 1
	}
	w := stdout
	if o.json {
		w = stderr
	}
	sum.write(w)
	return 0
}
