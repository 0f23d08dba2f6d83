package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// machine describes the machine the benchmark runs on: CPUs, the CPU model when /proc/cpuinfo
// names it, the Go version and the platform.
func machine() string {
	s := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		model := cpuModel(f)
		_ = f.Close()
		if model != "" {
			s += " (" + model + ")"
		}
	}
	return s + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// cpuModel returns the first "model name" in a /proc/cpuinfo listing, or "" when there is none.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(value), " ")
		}
	}
	return ""
}
