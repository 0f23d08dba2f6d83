package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// tableHeader is the first line of the text table. Its 429s count every throttled answer (a 429,
// or the persona's own throttle status: GitHub's 403); dialect is "-" for none and lying headers.
const tableHeader = "client         server         limit    rtt   workers headers dialect     clients  elapsed/phys  429s     lost  share  jain   429s-warm  verdict"

// writeRow writes r as a table line or, with asJSON, as one JSON object.
func writeRow(w io.Writer, r *record, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	warm := "-"
	if r.ThrottledShareWarm != nil {
		warm = fmt.Sprintf("%.2f%%", 100**r.ThrottledShareWarm)
	}
	bound := ""
	if r.cell.workerBound() {
		bound = " (worker-bound)"
	}
	dialect := r.Dialect
	if dialect == "" {
		dialect = "-"
	}
	_, err := fmt.Fprintf(w, "%-14s %-14s %-8s %-5s %7d %-7s %-11s %7d  %8.3fx%s %6.2f%% %5d  %5.2f  %5.3f  %9s  %s\n",
		r.Client, r.Server, r.Limit, fmt.Sprintf("%gms", r.RTTms), r.Workers, r.Headers, dialect, r.Clients,
		r.ElapsedOverPhysical, bound, 100*r.ThrottledShare, r.Lost, r.Share, r.Jain, warm, r.verdict())
	return err
}

// summary counts the cells each client kind met and keeps its worst cell.
type summary struct {
	met, total map[string]int
	worst      map[string]*record
	// physical429 counts the clairvoyant runs that drew a 429 (the model's own check: 0).
	physical429 int
}

func newSummary() *summary {
	return &summary{met: map[string]int{}, total: map[string]int{}, worst: map[string]*record{}}
}

func (s *summary) add(r *record) {
	s.total[r.Client]++
	if r.met() {
		s.met[r.Client]++
	}
	if w := s.worst[r.Client]; w == nil || r.badness() > w.badness() {
		s.worst[r.Client] = r
	}
}

// write prints the summary: cells met per client kind, in the sweep's order, and each one's worst
// cell.
func (s *summary) write(w io.Writer) {
	var kinds []string
	for k := range s.total {
		kinds = append(kinds, k)
	}
	order := map[string]int{}
	for i, k := range clientKinds {
		order[k] = i
	}
	sort.Slice(kinds, func(i, j int) bool { return order[kinds[i]] < order[kinds[j]] })
	fmt.Fprintln(w, "\nsummary: cells met per client (a cell is judged on its worst seed); worst cell of each")
	for _, k := range kinds {
		wr := s.worst[k]
		fmt.Fprintf(w, "%-14s %4d of %4d met; worst: %s %s rtt=%gms w=%d %s c=%d: %.3fx, %.2f%% 429s, lost %d -> %s\n",
			k, s.met[k], s.total[k], wr.Server, wr.Limit, wr.RTTms, wr.Workers, headersLabel(wr.Headers, wr.Dialect), wr.Clients,
			wr.ElapsedOverPhysical, 100*wr.ThrottledShare, wr.Lost, wr.verdict())
	}
	if s.physical429 > 0 {
		fmt.Fprintf(w, "WARNING: the clairvoyant client drew 429s in %d runs: the model's physical limit is not exact there\n", s.physical429)
	}
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
