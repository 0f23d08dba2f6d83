package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// realtimeCells are the cells the real-time check runs both ways: one per algorithm, every header
// mode and round trip, each about ten seconds long (N requests at the limit), steady and the
// clairvoyant on one seed.
var realtimeCells = []cell{
	{Server: algorithm.NameTokenBucket, Limit: limits[2], RTT: time.Millisecond, Workers: 16, Headers: headersNone, Clients: 1, N: 500},
	{Server: algorithm.NameFixedWindow, Limit: limits[2], RTT: 50 * time.Millisecond, Workers: 16, Headers: headersHonest, Clients: 1, N: 500},
	{Server: algorithm.NameSlidingLog, Limit: limits[3], RTT: time.Millisecond, Workers: 16, Headers: headersNone, Clients: 1, N: 2000},
	{Server: algorithm.NameSlidingWindow, Limit: limits[2], RTT: 50 * time.Millisecond, Workers: 16, Headers: headersLying, Clients: 1, N: 500},
	{Server: algorithm.NameLeakyBucket, Limit: limits[2], RTT: 200 * time.Millisecond, Workers: 64, Headers: headersNone, Clients: 1, N: 500},
}

// tcpNet is loopback sockets.
type tcpNet struct{ l net.Listener }

func (n tcpNet) listener() net.Listener { return n.l }
func (n tcpNet) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, n.l.Addr().String())
}

// realOnce runs kind on c in real time over loopback sockets, starting at seed's phase of the
// window (testserver's windows are aligned to the Unix epoch, as the wall clock's are).
func realOnce(c cell, kind string, seed uint64) (outcome, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return outcome{}, err
	}
	now := time.Now()
	time.Sleep(now.Truncate(c.Limit.Window).Add(c.Limit.Window + phaseOf(c, seed)).Sub(now))
	return simulate(c, kind, tcpNet{ln})
}

// realtimeCheck runs realtimeCells in virtual and in real time and prints both side by side, with
// how far apart they are: the difference of elapsed over physical (each against its own
// clairvoyant run) and of the 429 share.
func realtimeCheck(t *testing.T, w io.Writer) error {
	fmt.Fprintln(w, "cell                                         virtual: elapsed (/phys) 429s      real: elapsed (/phys) 429s      |Δ elapsed/phys| |Δ 429s|  clairvoyant real: 429s, elapsed/virtual's")
	var worstRatio, worstShare float64
	for _, c := range realtimeCells {
		vp := runOnce(t, c, clientPhysical, 1)
		v := runOnce(t, c, clientSteady, 1)
		rp, err := realOnce(c, clientPhysical, 1)
		if err != nil {
			return err
		}
		r, err := realOnce(c, clientSteady, 1)
		if err != nil {
			return err
		}
		vr := float64(v.elapsed) / float64(vp.elapsed)
		rr := float64(r.elapsed) / float64(rp.elapsed)
		dRatio, dShare := math.Abs(vr-rr), math.Abs(v.throttledShare()-r.throttledShare())
		worstRatio, worstShare = max(worstRatio, dRatio), max(worstShare, dShare)
		fmt.Fprintf(w, "%-44s %7.2fs (%.3fx) %6.2f%%      %7.2fs (%.3fx) %6.2f%%      %8.3f       %6.2f%%   %d, %.3fx (lost %d+%d)\n",
			c, v.elapsed.Seconds(), vr, 100*v.throttledShare(), r.elapsed.Seconds(), rr, 100*r.throttledShare(),
			dRatio, 100*dShare, rp.denied, float64(rp.elapsed)/float64(vp.elapsed), v.lost, r.lost)
	}
	fmt.Fprintf(w, "largest gap: %.3f in elapsed/physical, %.2f points of 429 share\n", worstRatio, 100*worstShare)
	return nil
}
