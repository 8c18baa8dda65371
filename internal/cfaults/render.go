package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/rules"
)

// verdict is a cell in one word.
func (c cell) verdict() string {
	switch {
	case c.full():
		return "named"
	case c.named():
		return "partly"
	}
	return "MISSED"
}

// reported lists a cell's new rules with their spec counts, the rules the
// fault breaks first.
func (c cell) reported(limit int) string {
	var parts []string
	for _, r := range c.Named {
		parts = append(parts, fmt.Sprintf("%s(%d)", r, c.New[r]))
	}
	var others []string
	for _, r := range c.sortedRules() {
		if !contains(c.Named, r) {
			others = append(others, fmt.Sprintf("%s(%d)", r, c.New[r]))
		}
	}
	if limit > 0 && len(others) > limit {
		others = append(others[:limit], fmt.Sprintf("+%d more", len(others)-limit))
	}
	return strings.TrimSpace(strings.Join(parts, " ") + " " + strings.Join(others, " "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeText writes the matrix for a terminal: one line per fault and
// profile, then the summary.
func writeText(w io.Writer, faults []Fault, profiles []string, cells map[string]map[string]cell) {
	fmt.Fprintf(w, "%-34s %-7s %-20s %-10s %-7s %s\n", "FAULT", "KIND", "BREAKS", "PROFILE", "VERDICT", "REPORTED BEYOND THE BASELINE (specs)")
	for _, f := range faults {
		for i, p := range profiles {
			c, ok := cells[p][f.Name]
			if !ok {
				continue
			}
			name, kind, breaks := f.Name, string(f.Kind), strings.Join(f.Breaks, " ")
			if i > 0 {
				name, kind, breaks = "", "", ""
			}
			line := c.reported(0)
			if len(c.Missed) > 0 {
				line += "  <- not " + strings.Join(c.Missed, " ")
			}
			fmt.Fprintf(w, "%-34s %-7s %-20s %-10s %-7s %s\n", name, kind, breaks, p, c.verdict(), line)
		}
	}
}

// writeSummary writes, per profile, how many faults of each set were named
// under a rule they break, and how many under every rule they break.
func writeSummary(w io.Writer, faults []Fault, profiles []string, cells map[string]map[string]cell, aims map[string]float64) {
	fmt.Fprintf(w, "\n%-10s", "PROFILE")
	for _, k := range kinds {
		if containsKind(faults, k) {
			fmt.Fprintf(w, " %-22s", "NAMED ("+kindName(k)+")")
		}
	}
	fmt.Fprintf(w, " %-22s %s\n", "EVERY RULE (all)", "AIM")
	for _, p := range profiles {
		fmt.Fprintf(w, "%-10s", p)
		for _, k := range kinds {
			if containsKind(faults, k) {
				t := count(faults, cells[p], k)
				fmt.Fprintf(w, " %-22s", fmt.Sprintf("%d/%d %.1f%%", t.Named, t.Faults, t.percent()))
			}
		}
		t := count(faults, cells[p], "")
		aim := ""
		if a, ok := aims[p]; ok {
			aim = fmt.Sprintf("%.0f%% ", a)
			if t.percent() >= a {
				aim += "met"
			} else {
				aim += "NOT MET"
			}
		}
		fmt.Fprintf(w, " %-22s %s\n", fmt.Sprintf("%d/%d %.1f%%", t.Full, t.Faults, t.fullPercent()), aim)
	}
}

// markdownCell is one fault at one profile in the docs' table.
func markdownCell(c cell, ok bool) string {
	if !ok {
		return "not run"
	}
	mark := map[string]string{"named": "✔", "partly": "◐", "MISSED": "✘"}[c.verdict()]
	var named []string
	for _, r := range c.Named {
		named = append(named, fmt.Sprintf("%s(%d)", r, c.New[r]))
	}
	s := mark
	if len(named) > 0 {
		s += " " + strings.Join(named, " ")
	}
	if len(c.Missed) > 0 && len(c.Named) > 0 {
		s += ", not " + strings.Join(c.Missed, " ")
	}
	var others []string
	for _, r := range c.sortedRules() {
		if !contains(c.Named, r) {
			others = append(others, fmt.Sprintf("%s(%d)", r, c.New[r]))
		}
	}
	if len(others) > 4 {
		others = append(others[:4], fmt.Sprintf("+%d", len(others)-4))
	}
	if len(others) > 0 {
		s += " · " + strings.Join(others, " ")
	}
	return strings.TrimSpace(s)
}

// writeMarkdown writes the docs' section: the summary, the table and the
// reasons for every fault not named at a profile.
func writeMarkdown(w io.Writer, faults []Fault, profiles []string, cells map[string]map[string]cell, aims map[string]float64, reasons map[reasonKey]reason, baselines map[string]outcome) {
	fmt.Fprintf(w, "The unmodified driver, with the same flags, reported (subtracted from every fault's run):\n\n")
	for _, line := range baselineText(profiles, baselines) {
		fmt.Fprintf(w, "- %s\n", line)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| profile |")
	for _, k := range kinds {
		if containsKind(faults, k) {
			fmt.Fprintf(w, " named: %s |", kindName(k))
		}
	}
	fmt.Fprintf(w, " every rule: all | aim |\n| --- |")
	for _, k := range kinds {
		if containsKind(faults, k) {
			fmt.Fprintf(w, " --- |")
		}
	}
	fmt.Fprintf(w, " --- | --- |\n")
	for _, p := range profiles {
		fmt.Fprintf(w, "| %s |", p)
		for _, k := range kinds {
			if containsKind(faults, k) {
				t := count(faults, cells[p], k)
				fmt.Fprintf(w, " %d/%d (%.1f%%) |", t.Named, t.Faults, t.percent())
			}
		}
		t := count(faults, cells[p], "")
		aim := ""
		if a, ok := aims[p]; ok {
			aim = fmt.Sprintf("%.0f%%", a)
			if t.percent() >= a {
				aim += ", met"
			} else {
				aim += ", not met"
			}
		}
		fmt.Fprintf(w, " %d/%d (%.1f%%) | %s |\n", t.Full, t.Faults, t.fullPercent(), aim)
	}
	fmt.Fprintf(w, "\nIn each cell: ✔ named under every rule the fault breaks, ◐ under some, ✘ under none; RULE(n): n specs\n"+
		"report the rule beyond the baseline, the rules it breaks first, then the others (· ...).\n")
	fmt.Fprintf(w, "\n| fault | kind | breaks |")
	for _, p := range profiles {
		fmt.Fprintf(w, " %s |", p)
	}
	fmt.Fprintf(w, "\n| --- | --- | --- |")
	for range profiles {
		fmt.Fprintf(w, " --- |")
	}
	fmt.Fprintln(w)
	for _, f := range faults {
		fmt.Fprintf(w, "| `%s` | %s | %s |", f.Name, f.Kind, strings.Join(f.Breaks, " "))
		for _, p := range profiles {
			c, ok := cells[p][f.Name]
			fmt.Fprintf(w, " %s |", markdownCell(c, ok))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nNot named, or not under every rule it breaks, and why (`ports/c/faults/unnamed.txt`):\n\n")
	any := false
	for _, f := range faults {
		for _, p := range profiles {
			c, ok := cells[p][f.Name]
			if !ok || c.full() {
				continue
			}
			any = true
			why := "no reason given"
			if r, has := reasons[reasonKey{f.Name, p}]; has {
				why = r.Text
			}
			what := "not named"
			if c.named() {
				what = "not named " + strings.Join(c.Missed, " ")
			}
			fmt.Fprintf(w, "- `%s` at %s, %s: %s\n", f.Name, p, what, why)
		}
	}
	if !any {
		fmt.Fprintf(w, "- none\n")
	}
}

// replaceSection puts body between the begin and end markers of doc.
func replaceSection(doc, begin, end, body string) (string, error) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("the markers %q and %q are not there, in that order", begin, end)
	}
	i += len(begin)
	return doc[:i] + "\n" + body + doc[j:], nil
}

// baselineText lists what the unmodified driver reported, per profile:
// the (spec, rule) pairs subtracted from every fault's run.
func baselineText(profiles []string, baselines map[string]outcome) []string {
	var out []string
	for _, p := range profiles {
		var parts []string
		b := baselines[p]
		var specs []string
		for spec, rs := range b {
			if len(rs) > 0 {
				specs = append(specs, spec)
			}
		}
		slices.Sort(specs)
		for _, spec := range specs {
			var rs []string
			for r := range b[spec] {
				rs = append(rs, r)
			}
			sort.Slice(rs, func(i, j int) bool { return rules.Less(rs[i], rs[j]) })
			parts = append(parts, spec+" "+strings.Join(rs, " "))
		}
		if len(parts) == 0 {
			parts = []string{"nothing"}
		}
		out = append(out, fmt.Sprintf("%s: %s", p, strings.Join(parts, "; ")))
	}
	return out
}
