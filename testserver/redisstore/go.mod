module github.com/steadyhttp/steady/testserver/redisstore

go 1.26.0

require (
	github.com/redis/go-redis/v9 v9.23.0
	github.com/steadyhttp/steady v0.0.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dunglas/httpsfv v1.1.2 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

// Development: the sibling modules of this repository, at the working tree's state (see docs/modules.md).
replace github.com/steadyhttp/steady => ../..
