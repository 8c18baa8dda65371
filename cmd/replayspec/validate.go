package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{name: "validate", summary: "check spec files against the format, without running them", run: validateCmd})
}

var validateHelp = help{
	name:     "validate",
	synopsis: "SPEC|DIR...",
	about: `Loads each spec (a YAML file, or every *.yaml file of a directory) and checks it
against the format: unknown keys, wrong types and impossible values are reported
as FILE:LINE:COL: PATH: what is wrong (allowed: ...). Nothing runs. What would
only fail at run time is refused here too: unknown counters and statuses,
values beyond 32 bits, waits that can never end, a buffer used after it is
freed, requires: that does not match what the spec uses, passes over the pass
budget, and a spec expected to need more memory than --memory-budget (the
estimate is printed with -v). Prints "ok FILE" for each good spec.`,
	examples: []string{
		"replayspec validate specs/",
		"replayspec validate my-spec.yaml",
	},
}

func validateCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(validateHelp.name)
	memory := fs.Int64("memory-budget", spec.DefaultMemoryBudget>>20, "refuse a spec expected to need more than `MiB` of memory")
	maxMiB := fs.Int64("max-input-mib", spec.MaxBytes>>20, "refuse a spec file larger than this many `MiB`")
	maxCases := fs.Int64("max-cases", spec.DefaultMaxCases, "refuse a spec whose matrix stands for more than `N` cases (counted before any is made)")
	verbose := fs.Bool("v", false, "print each spec's memory estimate")
	paths, code, ok := parseFlags(fs, validateHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		return usageError(stderr, "validate", "no spec given: name spec files or directories, e.g. replayspec validate specs/")
	}
	if *memory < 1 || *maxMiB < 1 || *memory > maxOptionMiB || *maxMiB > maxOptionMiB {
		return usageError(stderr, "validate", "--memory-budget %d, --max-input-mib %d: each takes 1 to %d MiB", *memory, *maxMiB, maxOptionMiB)
	}
	if *maxCases < 1 {
		return usageError(stderr, "validate", "--max-cases takes a positive number")
	}
	spec.SetMemoryBudget(uint64(*memory) << 20)
	defer spec.SetMemoryBudget(0)
	spec.SetMaxCases(*maxCases)
	defer spec.SetMaxCases(0)
	files, err := runner.SpecFiles(paths)
	if err != nil {
		return inputError(stderr, "validate", err, "Name an existing spec file or a directory of *.yaml specs.")
	}
	bad := 0
	for _, f := range files {
		if ctx.Err() != nil {
			return exitFail
		}
		var cases []spec.Spec
		err := error(nil)
		if !slices.Contains(paths, f) {
			err = regularInDir(f) // a FIFO found in a directory is not opened
		}
		if err == nil {
			cases, err = readCases(ctx, f, *maxMiB<<20)
		}
		if errors.Is(err, errReadInterrupted) {
			fmt.Fprintf(stderr, "replayspec validate: %v\n", err)
			return exitFail
		}
		if err != nil {
			bad++
			fmt.Fprintln(stdout, report.Clean(err.Error(), true))
			continue
		}
		if cases[0].Case != nil {
			fmt.Fprintf(stdout, "ok %s (%d cases)\n", report.Name(f), len(cases))
		} else {
			fmt.Fprintf(stdout, "ok %s\n", report.Name(f))
		}
		if *verbose {
			for _, s := range cases {
				e := spec.EstimateOf(s)
				total, base, bufs, passes, unit := e.Breakdown()
				fmt.Fprintf(stdout, "   %s needs about %d %s (%d %s any run needs + %s %s for its buffers + %s %s of trace for its passes) of a budget of %d MiB\n",
					report.Name(s.Name), total, unit, base, unit, spec.Part(bufs, e.Buffers), unit, spec.Part(passes, e.Passes), unit, spec.MemoryBudget()>>20)
			}
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "replayspec validate: %d of %d specs have errors; docs/spec-format.md lists every key\n", bad, len(files))
		return exitUsage
	}
	return exitOK
}
