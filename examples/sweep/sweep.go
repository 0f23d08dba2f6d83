package main

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"time"
)

// grid is the set of cells a sweep runs and how.
type grid struct {
	servers []string
	limits  []limitSpec
	rtts    []time.Duration
	workers []int
	headers []string
	// dialects are the dialects of the honest header mode; empty means testserver's own alone.
	dialects []string
	sharing  []int
	kinds    []string
	seeds    int
}

// fullGrid is the whole sweep of issue 10: every server kind, limit, round trip, worker count,
// header mode (honest headers in testserver's own dialect) and sharing, with every client kind, on
// three seeds.
func fullGrid() grid {
	return grid{
		servers:  serverKinds,
		limits:   limits,
		rtts:     []time.Duration{time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond},
		workers:  []int{1, 16, 64},
		headers:  []string{headersHonest, headersNone, headersLying},
		dialects: []string{dialectTestserver},
		sharing:  []int{1, 2, 10},
		kinds:    clientKinds,
		seeds:    3,
	}
}

// honestDialects returns the dialects of the honest header mode: g.dialects, or testserver's own
// when it names none.
func (g grid) honestDialects() []string {
	if len(g.dialects) == 0 {
		return []string{dialectTestserver}
	}
	return g.dialects
}

// cells returns the grid's cells with the headers and dialects innermost, so that cells differing
// only in them share one physical limit (the clairvoyant reads no header). A dialect shapes honest
// headers only: the honest mode gives one cell per dialect, and none and lying one cell each with
// no dialect, whatever -dialects lists (their servers send the status alone, or testserver's own
// fields lied, so a cell per dialect would run the same server again). The honest cell of the
// "none" persona and the none header mode are two views of one server (the status alone): the
// grid keeps both, the persona's cell being the dialect's row of the table.
func (g grid) cells() []cell {
	var out []cell
	for _, s := range g.servers {
		for _, l := range g.limits {
			for _, rtt := range g.rtts {
				for _, w := range g.workers {
					for _, k := range g.sharing {
						for _, h := range g.headers {
							c := cell{Server: s, Limit: l, RTT: rtt, Workers: w, Headers: h, Clients: k}
							if h != headersHonest {
								out = append(out, c)
								continue
							}
							for _, d := range g.honestDialects() {
								c.Dialect = d
								out = append(out, c)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// physicalKey is a cell without its headers and dialect.
func physicalKey(c cell) cell {
	c.Headers, c.Dialect = "", ""
	return c
}

// runCell runs every client kind of g on c for every seed, with the physical limits phys (one per
// seed, from the clairvoyant), and returns one judged record per kind. AIMD runs first when it is
// in the grid, so that the many-clients goal can compare with it.
func runCell(t *testing.T, g grid, c cell, phys []outcome) []*record {
	kinds := slices.Clone(g.kinds)
	if i := slices.Index(kinds, clientAIMD); i > 0 {
		kinds = append([]string{clientAIMD}, slices.Delete(kinds, i, i+1)...)
	}
	var out []*record
	aimdWarm := -1.0
	for _, k := range kinds {
		r := &record{Client: k, Server: c.Server, Limit: c.Limit.Name, RTTms: float64(c.RTT) / float64(time.Millisecond),
			Workers: c.Workers, Headers: c.Headers, Dialect: c.Dialect, Clients: c.Clients, cell: c}
		for seed := range g.seeds {
			r.add(runOnce(t, c, k, uint64(seed)+1), phys[seed])
		}
		if k == clientAIMD && r.ThrottledShareWarm != nil {
			aimdWarm = *r.ThrottledShareWarm
		}
		out = append(out, r)
	}
	for _, r := range out {
		if r.Client == clientAIMD {
			r.judge(-1)
		} else {
			r.judge(aimdWarm)
		}
	}
	slices.SortStableFunc(out, func(a, b *record) int {
		return slices.Index(g.kinds, a.Client) - slices.Index(g.kinds, b.Client)
	})
	return out
}

// physicalOf runs the clairvoyant client on c for every seed.
func physicalOf(t *testing.T, g grid, c cell) []outcome {
	phys := make([]outcome, g.seeds)
	for seed := range g.seeds {
		phys[seed] = runOnce(t, c, clientPhysical, uint64(seed)+1)
	}
	return phys
}

// runGrid runs every cell of g, writing each record as it is judged, and returns the summary and
// the records.
func runGrid(t *testing.T, g grid, w io.Writer, asJSON bool) (*summary, []*record, error) {
	sum := newSummary()
	var all []*record
	if !asJSON {
		fmt.Fprintln(w, tableHeader)
	}
	phys := map[cell][]outcome{}
	for _, c := range g.cells() {
		key := physicalKey(c)
		if _, ok := phys[key]; !ok {
			phys[key] = physicalOf(t, g, c)
			for _, p := range phys[key] {
				if p.denied > 0 || p.lost > 0 {
					sum.physical429++
				}
			}
		}
		for _, r := range runCell(t, g, c, phys[key]) {
			sum.add(r)
			all = append(all, r)
			if err := writeRow(w, r, asJSON); err != nil {
				return nil, nil, err
			}
		}
	}
	return sum, all, nil
}
