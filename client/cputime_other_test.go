//go:build !unix

package client

// cpuTime is not read on this system (see cputime_unix_test.go).
func cpuTime() int64 { return -1 }
