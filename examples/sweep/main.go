package main

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func main() {
	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "Sweep", F: func(t *testing.T) {
			c := cell{Server: os.Args[1], Limit: limits[1], RTT: time.Millisecond, Workers: 16, Headers: os.Args[2], Clients: 1}
			for _, k := range []string{clientPhysical, clientSteady, clientAIMD, clientCubic, clientRetryable, clientXRate} {
				s := time.Now()
				o := runOnce(t, c, k, 1)
				fmt.Printf("%s %v %+v cpu=%v\n", k, o.elapsed, o, time.Since(s))
			}
			os.Exit(0)
		}}}, nil, nil)
}
