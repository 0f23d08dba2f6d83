//go:build unix

package client

import "syscall"

// cpuTime is the CPU time the process has used, user and system, in nanoseconds; -1 when it
// cannot be read. A benchmark on a machine it shares reports it per operation beside the wall
// time: other processes' load stretches the wall time of every operation, not the CPU time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
