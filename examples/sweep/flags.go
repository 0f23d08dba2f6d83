package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// options are the program's flags.
type options struct {
	grid     grid
	json     bool
	realtime bool
	trace    bool
}

// errUsage marks a bad command line.
var errUsage = errors.New("usage")

// parseFlags parses args (without the program name). Every list flag takes comma-separated values
// and defaults to the whole sweep.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	full := fullGrid()
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var servers, lims, rtts, workers, headers, dialects, sharing, kinds string
	fs.BoolVar(&o.json, "json", false, "one JSON object per line and per cell (client, server, limit, rtt_ms, workers, headers, dialect, clients, elapsed_over_physical, throttled_share, lost, share, jain, throttled_share_warm)")
	fs.BoolVar(&o.realtime, "realtime", false, "run the real-time check instead: a few cells on loopback sockets in real time, side by side with the same cells in virtual time (steady only, about 2 minutes)")
	fs.StringVar(&servers, "servers", join(full.servers), "server kinds")
	fs.StringVar(&lims, "limits", joinLimits(full.limits), "limits")
	fs.StringVar(&rtts, "rtts", "1ms,50ms,200ms", "round trips")
	fs.StringVar(&workers, "workers", "1,16,64", "workers per client")
	fs.StringVar(&headers, "headers", join(full.headers), "header modes: honest, none, lying")
	fs.StringVar(&dialects, "dialects", join(full.dialects), "dialects of the honest headers: "+join(dialectNames)+
		" (testserver: its own headers; the others: testserver's personas); none and lying headers run once, with no dialect")
	fs.StringVar(&sharing, "sharing", "1,2,10", "independent clients sharing the key")
	fs.StringVar(&kinds, "clients", join(full.kinds), "client kinds")
	fs.IntVar(&o.grid.seeds, "seeds", full.seeds, "seeds per cell (a cell is judged on its worst)")
	fs.BoolVar(&o.trace, "trace", false, "print steady's learner events (strategy/state and why, at the virtual time since its client began) to stderr; for one cell and one client at a time (the lines of clients sharing a key interleave)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	var err error
	g := &o.grid
	if g.servers, err = oneOf("-servers", servers, serverKinds); err != nil {
		return o, err
	}
	if g.kinds, err = oneOf("-clients", kinds, clientKinds); err != nil {
		return o, err
	}
	if g.headers, err = oneOf("-headers", headers, full.headers); err != nil {
		return o, err
	}
	if g.dialects, err = oneOf("-dialects", dialects, dialectNames); err != nil {
		return o, err
	}
	if set(fs, "dialects") && !slices.Contains(g.headers, headersHonest) {
		return o, fmt.Errorf("%w: -dialects shapes honest headers only, and -headers %s has none", errUsage, join(g.headers))
	}
	for _, name := range splitList(lims) {
		i := slices.IndexFunc(limits, func(l limitSpec) bool { return l.Name == name })
		if i < 0 {
			return o, fmt.Errorf("%w: -limits: unknown limit %q (want some of %s)", errUsage, name, joinLimits(limits))
		}
		g.limits = append(g.limits, limits[i])
	}
	for _, s := range splitList(rtts) {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return o, fmt.Errorf("%w: -rtts: %q is not a positive duration", errUsage, s)
		}
		g.rtts = append(g.rtts, d)
	}
	if g.workers, err = positives("-workers", workers); err != nil {
		return o, err
	}
	if g.sharing, err = positives("-sharing", sharing); err != nil {
		return o, err
	}
	if g.seeds < 1 {
		return o, fmt.Errorf("%w: -seeds %d: at least 1", errUsage, g.seeds)
	}
	if len(g.limits) == 0 || len(g.rtts) == 0 {
		return o, fmt.Errorf("%w: -limits and -rtts must name at least one value", errUsage)
	}
	return o, nil
}

// set reports whether the command line set the flag name.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func oneOf(name, value string, allowed []string) ([]string, error) {
	items := splitList(value)
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: %s must name at least one of %s", errUsage, name, join(allowed))
	}
	for _, it := range items {
		if !slices.Contains(allowed, it) {
			return nil, fmt.Errorf("%w: %s: unknown %q (want some of %s)", errUsage, name, it, join(allowed))
		}
	}
	return items, nil
}

func positives(name, value string) ([]int, error) {
	var out []int
	for _, s := range splitList(value) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: %s: %q is not a positive integer", errUsage, name, s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s must name at least one value", errUsage, name)
	}
	return out, nil
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func joinLimits(ls []limitSpec) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return join(names)
}
