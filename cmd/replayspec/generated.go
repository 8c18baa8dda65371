package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
)

// portGenerated is how many generated specs run beside the library on an
// exec: target when --gen is not given: a port is judged on what the
// spec generator found in our engine, not only on the library (issue 20).
const portGenerated = 50

// generated are the specs a run draws beside the library: count specs of
// seeds seed, seed+1, ..., within the capabilities the target claims, so
// the same target and seed give the same specs every time.
type generated struct {
	count  int
	seed   int
	caps   []string
	target string // the --target value, for the commands that reproduce one
	faults string // the --fault value, likewise
	seeds  map[string]int
}

// planGenerated reads --gen and --gen-seed for target tg: -1 (the default)
// is portGenerated on an exec: target and none elsewhere.
func planGenerated(n int, seedFlag, targetFlag, faultFlag string, tg target.Target) (*generated, error) {
	if n < -1 {
		return nil, fmt.Errorf("--gen %d: want 0 or more", n)
	}
	if n == -1 {
		n = 0
		if strings.HasPrefix(targetFlag, "exec:") {
			n = portGenerated
		}
	}
	var seed int
	switch {
	case seedFlag == "random":
		seed = int(time.Now().UnixNano()%999_999) + 1
	default:
		s, err := strconv.Atoi(seedFlag)
		if err != nil || s < 1 {
			return nil, fmt.Errorf("--gen-seed %q: want a whole number from 1, or random", seedFlag)
		}
		seed = s
	}
	if n == 0 {
		return nil, nil
	}
	var caps []string
	if c, ok := tg.(target.Capable); ok {
		for _, x := range c.Capabilities() {
			if slices.Contains(spec.Capabilities, x) {
				caps = append(caps, x)
			}
		}
	}
	if caps == nil {
		caps = []string{} // claims nothing: the plainest specs, not everything
	}
	return &generated{count: n, seed: seed, caps: caps, target: targetFlag, faults: faultFlag, seeds: map[string]int{}}, nil
}

// specs draws the generated specs, named gen-SEED as replayspec gen names
// them.
func (g *generated) specs() []spec.Spec {
	out := make([]spec.Spec, 0, g.count)
	for i := range g.count {
		seed := g.seed + i
		cfg := specgen.Config{Caps: g.caps, Name: fmt.Sprintf("gen-%06d", seed)}
		s := specgen.Example(cfg, seed)
		s.Description = fmt.Sprintf("Generated (seed %d) for %s: %s", seed, g.target, g.rerun(seed))
		g.seeds[s.Name] = seed
		out = append(out, s)
	}
	return out
}

// rerun is the one command that runs the spec of seed again, alone, on
// the same target (the same claims draw the same spec).
func (g *generated) rerun(seed int) string {
	name := fmt.Sprintf("gen-%06d", seed)
	fault := ""
	if g.faults != "" {
		fault = " --fault " + shellQuote(g.faults)
	}
	return fmt.Sprintf("replayspec run --target %s%s --gen 1 --gen-seed %d --run '^%s$' --trace-out %s.ndjson",
		shellQuote(g.target), fault, seed, name, name)
}

// header is what the reports say of the generated specs.
func (g *generated) header() *report.Generated {
	if g == nil {
		return nil
	}
	return &report.Generated{Count: g.count, Seed: g.seed, Caps: g.caps,
		Command: fmt.Sprintf("replayspec gen --seed %d --count %d --caps %s --out DIR", g.seed, g.count, capsArg(g.caps))}
}

// mark adds a generated spec's seed and the command that reruns it to its
// report record.
func (g *generated) mark(rec *report.JSONResult) {
	if g == nil {
		return
	}
	if seed, ok := g.seeds[rec.Name]; ok {
		rec.Seed = seed
		rec.Rerun = g.rerun(seed)
	}
}

func capsArg(caps []string) string {
	if len(caps) == 0 {
		return "none"
	}
	return strings.Join(caps, ",")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
