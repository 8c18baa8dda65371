package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
)

// reasonKey is a fault at a profile.
type reasonKey struct{ Fault, Profile string }

// reason says why a fault is not named, or not under every rule it breaks,
// at a profile: no observation there could show it, or a gap that another
// change must close.
type reason struct {
	Text string
	Line int
}

// readReasons reads the reasons file: one "NAME PROFILE: why" a line,
// '#' comments and blank lines aside.
func readReasons(file string, profiles []string) (map[reasonKey]reason, error) {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return map[reasonKey]reason{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[reasonKey]reason{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, why, ok := strings.Cut(line, ":")
		fields := strings.Fields(head)
		if !ok || len(fields) != 2 || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s:%d: want 'NAME PROFILE: why', got %q", file, n, line)
		}
		if !slices.Contains(allProfiles, fields[1]) {
			return nil, fmt.Errorf("%s:%d: %q is not a profile (%s)", file, n, fields[1], strings.Join(allProfiles, ", "))
		}
		k := reasonKey{fields[0], fields[1]}
		if prev, dup := out[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s at %s has a reason already (line %d)", file, n, k.Fault, k.Profile, prev.Line)
		}
		out[k] = reason{Text: strings.TrimSpace(why), Line: n}
	}
	return out, sc.Err()
}

// allProfiles are the observability profiles, widest first.
var allProfiles = []string{"full", "runtime", "black-box"}

// race says whether a reason explains a miss that comes and goes: the
// situation that shows the fault depends on how the driver's free threads
// interleave, so one run names it and the next does not. Such a line is
// not stale when a run names the fault; any other is.
func (r reason) race() bool { return strings.HasPrefix(r.Text, "race") }

// audit compares the reasons with the cells: every cell not fully named
// needs a reason, and a reason for a cell now fully named is stale (the
// list would hide a regression), unless it is a race. Cells that were not
// run are not judged.
func audit(faults []Fault, cells map[string]map[string]cell, reasons map[reasonKey]reason, file string) []string {
	var problems []string
	known := map[string]bool{}
	for _, f := range faults {
		known[f.Name] = true
		for _, p := range allProfiles {
			c, ran := cells[p][f.Name]
			if !ran {
				continue
			}
			r, has := reasons[reasonKey{f.Name, p}]
			switch {
			case !c.full() && !has:
				problems = append(problems, fmt.Sprintf("%s at %s: %s not named, and %s gives no reason", f.Name, p, strings.Join(c.Missed, " "), file))
			case c.full() && has && !r.race():
				problems = append(problems, fmt.Sprintf("%s:%d: %s at %s is named under every rule it breaks now: remove the line", file, reasons[reasonKey{f.Name, p}].Line, f.Name, p))
			}
		}
	}
	for k, r := range reasons {
		if !known[k.Fault] {
			problems = append(problems, fmt.Sprintf("%s:%d: no fault is named %s", file, r.Line, k.Fault))
		}
	}
	slices.Sort(problems)
	return problems
}
