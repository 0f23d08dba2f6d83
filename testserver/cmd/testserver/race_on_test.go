//go:build race

package main

// raceEnabled reports whether the race detector is on: it slows every decision several times, so
// the load tests that count decisions made within their deadline run without it (.ci/run).
const raceEnabled = true
