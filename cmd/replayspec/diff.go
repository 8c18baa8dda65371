package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/replayspec/replayspec/internal/tracediff"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
)

func init() {
	register(command{name: "diff", summary: "run specs on two targets and compare their traces", run: diffCmd})
}

var diffHelp = help{
	name:     "diff",
	synopsis: "--target A --target B [options] SPEC|DIR...",
	about: `Runs each spec on two implementations and compares their traces modulo what may
legitimately differ: clocks, counter values, where ids come from (dispatch, signal,
queue and correlation ids are renumbered in order of appearance; agents and buffers
are named by the spec), how threads interleave, and what the weaker of the two
cannot observe (only the sources both traces report are compared). For each
dispatch it reports the first divergence, with the rules the differing events
touch, and the rules the oracles judge differently on the two traces.

A spec a target does not claim is skipped there and not compared. With
--traffic the runtime's memory traffic and a restore's bytes are compared too
(off by default: how much a restore writes is the implementation's business).
--trace-out DIR writes both traces of each spec, DIR/A/NAME.ndjson and
DIR/B/NAME.ndjson (A and B the target names, or a and b when they are equal).

Exit status: 0 the traces agree, 1 a divergence or a target error, 2 bad
input, or a target that is not available on this machine.`,
	examples: []string{
		"replayspec diff --target sim --target cuda specs/",
		"replayspec diff --target sim --target exec:./my-port specs/fixed-three-passes.yaml",
		"replayspec gen --count 1000 --caps cuda --out gen/ && replayspec diff --target sim --target cuda gen/",
	},
}

// targetList collects a repeated --target.
type targetList []string

func (l *targetList) String() string     { return strings.Join(*l, ",") }
func (l *targetList) Set(v string) error { *l = append(*l, v); return nil }

// diffOutcome is one spec's comparison.
type diffOutcome struct {
	Spec string `json:"spec"`
	File string `json:"file,omitempty"`
	// Status is same, differs, skipped or error.
	Status      string                  `json:"status"`
	Reason      string                  `json:"reason,omitempty"`
	Sources     []string                `json:"sources,omitempty"`
	Divergences []tracediff.Divergence  `json:"divergences,omitempty"`
	Verdicts    []tracediff.VerdictDiff `json:"verdicts,omitempty"`
}

func diffCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(diffHelp.name)
	var targets targetList
	fs.Var(&targets, "target", "a target to run on (`NAME`), twice: sim, cuda, rocr or exec:COMMAND")
	format := fs.String("format", "text", "report format: text or json")
	traffic := fs.Bool("traffic", false, "compare the runtime's memory traffic and the bytes restores claim too")
	traceOut := fs.String("trace-out", "", "write both traces of each spec under `DIR`")
	jsonOut := fs.String("json", "", "also write the JSON report to `FILE`")
	timeout := fs.Duration("timeout", 60*time.Second, "give up on a spec on one target after this `duration`")
	var budget traceBudget
	budget.add(fs)
	paths, code, ok := parseFlags(fs, diffHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if err := budget.check(); err != nil {
		return usageError(stderr, "diff", "%v", err)
	}
	if len(targets) != 2 {
		return usageError(stderr, "diff", "want --target twice (the two implementations to compare), got %d", len(targets))
	}
	if err := checkFormat(*format, []string{"text", "json"}); err != nil {
		return usageError(stderr, "diff", "--format: %v", err)
	}
	if len(paths) == 0 {
		return usageError(stderr, "diff", "no spec given: name spec files or directories, e.g. replayspec diff --target sim --target cuda specs/")
	}
	var tgs [2]target.Target
	for i, name := range targets {
		tg, err := openTarget(name, nil, budget.mib)
		if err != nil {
			var un *target.Unavailable
			if errors.As(err, &un) {
				fmt.Fprintf(stderr, "replayspec diff: target %s is not available on this machine: %s\n", name, un.Reason)
				return exitUsage
			}
			return usageError(stderr, "diff", "--target: %v", err)
		}
		tgs[i] = tg
	}
	specs, err := loadSpecs(ctx, paths, spec.MaxBytes)
	if err != nil {
		return inputError(stderr, "diff", err, loadHint(err))
	}
	dirs := [2]string{targets[0], targets[1]}
	if dirs[0] == dirs[1] {
		dirs = [2]string{"a", "b"}
	}
	// Every file diff writes is known now, and guarded like run's.
	var declared []namedPath
	traceFiles := map[string][2]string{}
	if *traceOut != "" {
		used := map[string]int{}
		for _, s := range specs {
			base := fileName(s.Name)
			if used[base]++; used[base] > 1 {
				base += "." + strconv.Itoa(used[base])
			}
			var fs [2]string
			for i := range fs {
				fs[i] = filepath.Join(*traceOut, fileName(dirs[i]), base+".ndjson")
				declared = append(declared, namedPath{"--trace-out", fs[i]})
			}
			traceFiles[s.Name] = fs
		}
	}
	if *jsonOut != "" {
		declared = append(declared, namedPath{"--json", *jsonOut})
	}
	outs, err := guardOutputs(specInputs(specs), declared)
	if err != nil {
		return usageError(stderr, "diff", "%v", err)
	}
	var outcomes []diffOutcome
	for _, s := range specs {
		if ctx.Err() != nil {
			// Interrupted: start nothing more; what finished is reported
			// below (an H200 batch cut off by timeout(1) went on starting
			// each remaining spec, every one an interrupted error).
			break
		}
		var rs [2]runner.Result
		for i, tg := range tgs {
			rs[i] = runner.Run(ctx, s, runner.Options{Target: tg, Timeout: *timeout})
			var un *target.Unavailable
			if errors.As(rs[i].Err, &un) {
				fmt.Fprintf(stderr, "replayspec diff: target %s is not available on this machine: %s\n", tg.Name(), un.Reason)
				return exitUsage
			}
		}
		o := compareResults(s.Name, s.File, targets, rs, tracediff.Options{Traffic: *traffic})
		outcomes = append(outcomes, o)
		if *traceOut != "" && o.Status != "skipped" {
			for i := range rs {
				if err := writeTrace(outs, traceFiles[s.Name][i], rs[i].Trace); err != nil {
					fmt.Fprintf(stderr, "replayspec diff: %v\n", err)
					return exitIO
				}
			}
		}
	}
	if sig := interruptedBy(ctx); sig != nil {
		fmt.Fprintf(stderr, "replayspec diff: interrupted by %s: %d of %d specs compared\n", signalName(sig), len(outcomes), len(specs))
	}
	writeJSON := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"targets": targets, "specs": outcomes})
	}
	if *format == "json" {
		if err := writeJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "replayspec diff: %v\n", stdoutError(err))
			return exitIO
		}
	} else {
		writeDiffText(stdout, targets, outcomes)
	}
	if *jsonOut != "" {
		if err := outs.write(*jsonOut, writeJSON); err != nil {
			fmt.Fprintf(stderr, "replayspec diff: %v\n", err)
			return exitIO
		}
	}
	for _, o := range outcomes {
		if o.Status == "differs" || o.Status == "error" {
			return exitFail
		}
	}
	if ctx.Err() != nil {
		return exitFail // not every spec was compared (the process exits 130 or 143)
	}
	return exitOK
}

// compareResults classifies one spec's two runs.
func compareResults(name, file string, targets []string, rs [2]runner.Result, opts tracediff.Options) diffOutcome {
	o := diffOutcome{Spec: name, File: file}
	for i, r := range rs {
		if r.Verdict() == runner.Skip {
			o.Status, o.Reason = "skipped", fmt.Sprintf("on %s: %s", targets[i], r.SkipReason)
			return o
		}
	}
	var errs []string
	for i, r := range rs {
		if r.Err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", targets[i], r.Err))
		}
	}
	rep := tracediff.Compare(rs[0].Trace, rs[1].Trace, opts)
	for _, s := range rep.Sources {
		o.Sources = append(o.Sources, string(s))
	}
	o.Divergences, o.Verdicts = rep.Divergences, rep.Verdicts
	switch {
	case len(errs) > 0:
		o.Status, o.Reason = "error", strings.Join(errs, "; ")
	case rep.Same():
		o.Status = "same"
	default:
		o.Status = "differs"
	}
	return o
}

func writeDiffText(w io.Writer, targets []string, outcomes []diffOutcome) {
	targets = []string{report.Name(targets[0]), report.Name(targets[1])}
	count := map[string]int{}
	width := max(len(targets[0]), len(targets[1]))
	for _, o := range outcomes {
		o := escapeOutcome(o)
		count[o.Status]++
		switch o.Status {
		case "same":
			fmt.Fprintf(w, "same     %s\n", o.Spec)
			continue
		case "skipped":
			fmt.Fprintf(w, "skipped  %s (%s)\n", o.Spec, o.Reason)
			continue
		case "error":
			fmt.Fprintf(w, "ERROR    %s: %s\n", o.Spec, o.Reason)
		default:
			fmt.Fprintf(w, "DIFFERS  %s (compared: %s)\n", o.Spec, strings.Join(o.Sources, ", "))
		}
		for _, d := range o.Divergences {
			fmt.Fprintf(w, "  %s, step %d: touches %s\n", d.Dispatch, d.Step, strings.Join(d.Rules, ", "))
			if d.Before != "" {
				fmt.Fprintf(w, "    %-*s  %s\n", width, "both", d.Before)
			}
			fmt.Fprintf(w, "    %-*s  %s\n", width, targets[0], orEnd(d.A))
			fmt.Fprintf(w, "    %-*s  %s\n", width, targets[1], orEnd(d.B))
		}
		for _, v := range o.Verdicts {
			fmt.Fprintf(w, "  verdict %s: %s on %s, %s on %s\n", v.Rule, v.A, targets[0], v.B, targets[1])
		}
	}
	fmt.Fprintf(w, "\n%d specs: %d same, %d differ, %d skipped, %d errors (%s vs %s)\n",
		len(outcomes), count["same"], count["differs"], count["skipped"], count["error"], targets[0], targets[1])
}

// escapeOutcome makes every name of a comparison (the spec's, its
// dispatches', the events' fields) safe to print on one line.
func escapeOutcome(o diffOutcome) diffOutcome {
	o.Spec, o.File, o.Reason = report.Name(o.Spec), report.Name(o.File), report.Clean(o.Reason, false)
	srcs := make([]string, len(o.Sources))
	for i, src := range o.Sources {
		srcs[i] = report.Name(src)
	}
	o.Sources = srcs
	ds := make([]tracediff.Divergence, len(o.Divergences))
	for i, d := range o.Divergences {
		d.Dispatch, d.Before, d.A, d.B = report.Name(d.Dispatch), report.Name(d.Before), report.Name(d.A), report.Name(d.B)
		ds[i] = d
	}
	o.Divergences = ds
	vs := make([]tracediff.VerdictDiff, len(o.Verdicts))
	for i, v := range o.Verdicts {
		v.Rule = report.Name(v.Rule)
		vs[i] = v
	}
	o.Verdicts = vs
	return o
}

func orEnd(line string) string {
	if line == "" {
		return "(no more events)"
	}
	return line
}
