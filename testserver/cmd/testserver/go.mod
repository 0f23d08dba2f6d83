module github.com/steadyhttp/steady/testserver/cmd/testserver

go 1.26.0

require (
	github.com/dunglas/httpsfv v1.1.2
	github.com/prometheus/client_golang v1.23.2
	github.com/redis/go-redis/v9 v9.23.0
	github.com/steadyhttp/steady v0.0.0
	github.com/steadyhttp/steady/testserver/promstats v0.0.0
	github.com/steadyhttp/steady/testserver/redisstore v0.0.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)

// Development: the sibling modules of this repository, at the working tree's state (see docs/modules.md).
replace (
	github.com/steadyhttp/steady => ../../..
	github.com/steadyhttp/steady/testserver/promstats => ../../promstats
	github.com/steadyhttp/steady/testserver/redisstore => ../../redisstore
)
