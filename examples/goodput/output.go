package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// columns are the table's column names, shared by the text and Markdown forms.
var columns = []string{"algorithm", "headers", "client", "elapsed", "physical", "elapsed/physical",
	"429s (server)", "attempts", "retries", "lost", "learned", "goal"}

// cells returns the row's values in the order of columns.
func (r *row) cells() []string {
	ratio, learned := "-", "-"
	if r.Ratio != nil {
		ratio = fmt.Sprintf("%.3f×", *r.Ratio)
	}
	if r.LearnedRPS != nil {
		learned = fmt.Sprintf("%.1f/s", *r.LearnedRPS)
	}
	elapsed := fmt.Sprintf("%.2fs", r.ElapsedS)
	switch {
	case r.Interrupted:
		elapsed += " (interrupted)"
	case r.TimedOut:
		elapsed += " (timeout)"
	}
	goal := r.Goal
	if goal == "" {
		goal = "-"
	}
	return []string{r.Algorithm, headersWord(r.Headers), r.Client, elapsed,
		fmt.Sprintf("%.2fs", r.PhysicalS), ratio, percent(r.DeniedShare),
		fmt.Sprint(r.ServerRequests), fmt.Sprint(r.Retries), fmt.Sprint(r.Lost), learned, goal}
}

// preamble is what the text and Markdown forms say before the table: the settings, what the told
// clients are told, how the columns are computed, the goals, and the machine.
func preamble(cfg *config, machine string) []string {
	return []string{
		fmt.Sprintf("%d GET requests per run from %d workers; server limit %d per %v (R = %g/s), bucket burst %d; per-run timeout %v.",
			cfg.n, cfg.workers, cfg.limit, cfg.window, cfg.rate(), cfg.burst, cfg.timeout),
		toldNote(cfg),
		"physical = (N − initial burst)/R, initial burst = the burst for token-bucket and leaky-bucket, = the limit for " +
			"fixed-window and sliding-log; for sliding-window N/R less the start's phase in its window (it admits at most R·t by time t); 429s = denied/attempts as the server counts them; retries as the client counts them; " +
			"lost = requests that did not end in 2xx.",
		"goal (issue 4): steady-learning ≤1.03× and ≤0.5% 429s with headers, ≤1.10× and ≤3% without; " +
			"steady-told ≤1.01× and no 429s; no request lost.",
		"machine: " + machine,
	}
}

// toldNote says how steady-told and xrate are configured for each algorithm at cfg's settings
// (toldPaceFor).
func toldNote(cfg *config) string {
	pace := func(alg string) toldPace { return toldPaceFor(setupFor(cfg, alg, true), cfg.margin) }
	bucket := pace(algorithm.NameTokenBucket)
	window := pace(algorithm.NameFixedWindow)
	counter := pace(algorithm.NameSlidingWindow)
	return fmt.Sprintf("steady-told and xrate are told the server's published policy less a margin m = %.4g%%, "+
		"as a user who read it would configure examples/batch: "+
		"token-bucket and leaky-bucket (R, burst B): R×(1−m) with burst max(1, ⌊B×(1−m)⌋) = %s for both (examples/batch -rate R -burst B); "+
		"fixed-window and sliding-log (L per W): steady-told a window quota of L per W/(1−m) = %s (examples/batch -quota L/W), "+
		"xrate, which has no window primitive, an even pace R×(1−m) = %s; "+
		"sliding-window (a counter of L per W on epoch-aligned windows): steady-told mirrors the counter's rule on the same windows with max(1, ⌊L×(1−m)⌋) per W = %s "+
		"(examples/batch -counter L/W): the fresh start's burst at once, then as the previous window's weight decays, L'−1 per window; "+
		"xrate an even pace (L−1)/W×(1−m) = %s (a counter sustains L−1 per window, and its burst at a fresh start, borrowed from the next window, "+
		"is out of reach of a client that does not know where the windows start).",
		100*cfg.margin, bucket, window, window.bucketString(), counter, counter.bucketString())
}

// writeText writes the preamble and an aligned table of rows.
func writeText(w io.Writer, cfg *config, machine string, rows []row) error {
	var b strings.Builder
	for _, line := range preamble(cfg, machine) {
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(columns, "\t"))
	for i := range rows {
		fmt.Fprintln(tw, strings.Join(rows[i].cells(), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdown writes the preamble as paragraphs and the rows as a Markdown table.
func writeMarkdown(w io.Writer, cfg *config, machine string, rows []row) error {
	var b strings.Builder
	for _, line := range preamble(cfg, machine) {
		b.WriteString(line + "\n\n")
	}
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(columns)) + "\n")
	for i := range rows {
		cells := rows[i].cells()
		for j, c := range cells {
			cells[j] = strings.ReplaceAll(c, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSON writes one row as one JSON object on one line.
func writeJSON(w io.Writer, r row) error {
	return json.NewEncoder(w).Encode(r)
}
