// Package memory benchmarks steady's in-memory limiter (testserver.Limiter.DecideKey on the
// memory store) side by side with sethvargo/go-limiter, throttled/throttled and ulule/limiter, in
// one run. It is its own module so that the peers never enter the library's go.mod; a replace
// directive points it at the repository root.
//
// Run from this directory:
//
//	go test -run '^$' -bench . -benchmem -count=10 > results.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl results.txt
package memory
