package main

import (
	"slices"
	"sort"

	"github.com/replayspec/replayspec/rules"
)

// cell is one fault at one profile: what its driver showed beyond what
// the unmodified driver showed with the same flags.
type cell struct {
	// New counts, per rule (EXPECT and ERROR included), the specs whose
	// run reported it while no baseline run of that spec did.
	New map[string]int
	// Named are the rules the fault breaks that were reported (New);
	// Missed those that were not.
	Named, Missed []string
}

// named says whether the fault was named under a rule it breaks.
func (c cell) named() bool { return len(c.Named) > 0 }

// full says whether every rule it breaks was named.
func (c cell) full() bool { return len(c.Missed) == 0 }

// merge is the union of several runs of one driver: a (spec, rule) any of
// them reported. The baseline is run more than once, so that a violation
// the unmodified driver shows only now and then is not credited to a fault.
func merge(runs ...outcome) outcome {
	out := outcome{}
	for _, r := range runs {
		for spec, rs := range r {
			if out[spec] == nil {
				out[spec] = map[string]bool{}
			}
			for rule := range rs {
				out[spec][rule] = true
			}
		}
	}
	return out
}

// score compares a fault's run with the baseline, spec by spec and rule by
// rule: a violation counts for the fault only where the baseline did not
// report the same rule for the same spec.
func score(f Fault, run, baseline outcome) cell {
	c := cell{New: map[string]int{}}
	for spec, rs := range run {
		for rule := range rs {
			if !baseline[spec][rule] {
				c.New[rule]++
			}
		}
	}
	for _, r := range f.Breaks {
		if c.New[r] > 0 {
			c.Named = append(c.Named, r)
		} else {
			c.Missed = append(c.Missed, r)
		}
	}
	return c
}

// sortedRules lists a cell's new rules in catalogue order (EXPECT and
// ERROR last).
func (c cell) sortedRules() []string {
	var out []string
	for r := range c.New {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return rules.Less(out[i], out[j]) })
	return out
}

// tally is how many faults of a set were named at a profile.
type tally struct {
	Faults, Named, Full int
}

func (t tally) percent() float64 {
	if t.Faults == 0 {
		return 0
	}
	return 100 * float64(t.Named) / float64(t.Faults)
}

func (t tally) fullPercent() float64 {
	if t.Faults == 0 {
		return 0
	}
	return 100 * float64(t.Full) / float64(t.Faults)
}

// count tallies the cells of the faults of kind (every fault: "").
func count(faults []Fault, cells map[string]cell, kind Kind) tally {
	var t tally
	for _, f := range faults {
		if kind != "" && f.Kind != kind {
			continue
		}
		c, ok := cells[f.Name]
		if !ok {
			continue
		}
		t.Faults++
		if c.named() {
			t.Named++
		}
		if c.full() {
			t.Full++
		}
	}
	return t
}

// kinds are the sets the matrix reports apart, then together ("").
var kinds = []Kind{Switch, Patch, ""}

func kindName(k Kind) string {
	switch k {
	case Switch:
		return "switches"
	case Patch:
		return "patches"
	}
	return "all"
}

func containsKind(faults []Fault, k Kind) bool {
	return k == "" || slices.ContainsFunc(faults, func(f Fault) bool { return f.Kind == k })
}
