module github.com/steadyhttp/steady/bench/memory

go 1.25.0

require (
	github.com/sethvargo/go-limiter v0.7.1
	github.com/steadyhttp/steady v0.0.0
	github.com/throttled/throttled/v2 v2.15.0
	github.com/ulule/limiter/v3 v3.11.2
)

require (
	github.com/dunglas/httpsfv v1.1.2 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)

// Development: the sibling modules of this repository, at the working tree's state (see docs/modules.md).
replace github.com/steadyhttp/steady => ../..
