package report

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/runner"
)

// CSV writes the results file: one line per case as it finishes (in the
// specs' order, so the file is the same whatever the number of workers),
// `case,status,duration,rules`. status is pass, fail, error, skip or flake;
// duration is seconds (all attempts); rules are the rules it broke (a
// failure, error or flake's first failing attempt), else the rules it
// names, space-separated. A later run reads it back as a baseline.
type CSV struct {
	w *csv.Writer
}

// NewCSV writes the header and returns the writer.
func NewCSV(w io.Writer) (*CSV, error) {
	c := &CSV{w: csv.NewWriter(w)}
	if err := c.w.Write([]string{"case", "status", "duration", "rules"}); err != nil {
		return nil, err
	}
	c.w.Flush()
	return c, c.w.Error()
}

// Write writes one case and flushes, so that the file holds every case
// finished so far.
func (c *CSV) Write(a runner.Attempted) error {
	rules := a.Result.Spec.Rules
	if r := failingRules(a); len(r) > 0 {
		rules = r
	}
	rec := []string{a.Result.Spec.Name, string(a.Status()), strconv.FormatFloat(a.Elapsed.Seconds(), 'f', 6, 64), strings.Join(rules, " ")}
	if err := c.w.Write(rec); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

// failingRules are the rules a case broke: of its first failing attempt
// for a flake, else of its result.
func failingRules(a runner.Attempted) []string {
	r := a.Result
	if a.Failed != nil {
		r = *a.Failed
	}
	var out []string
	for _, v := range r.Violations {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	for _, id := range append(r.Unexercised, r.Unseen...) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
