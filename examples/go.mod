module github.com/steadyhttp/steady/examples

go 1.25.0

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/redis/go-redis/v9 v9.22.0
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/steadyhttp/steady v0.0.0
	github.com/steadyhttp/steady/throttle/redisthrottle v0.0.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.22.0
	golang.org/x/term v0.45.0
	golang.org/x/time v0.15.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dunglas/httpsfv v1.1.2 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

// Development: the sibling modules of this repository, at the working tree's state (see docs/modules.md).
replace (
	github.com/steadyhttp/steady => ..
	github.com/steadyhttp/steady/throttle/redisthrottle => ../throttle/redisthrottle
)
