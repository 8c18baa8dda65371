package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/target"
)

// ciFlags are run's habits of a GPU CI runner (deqp-runner's): workers,
// reruns that tell flakes from failures, known flakes, a baseline of
// expected failures, and a results file written as cases finish.
type ciFlags struct {
	jobs     *int
	retries  *int
	flakes   *string
	baseline *string
	results  *string
	flakeOut *string

	base runner.Baseline
	fl   runner.Flakes
}

func addCIFlags(fs *flag.FlagSet) *ciFlags {
	return &ciFlags{
		jobs:     fs.Int("j", 0, "run `N` specs at once (0: the target's default, every core on the simulator and for ports, one on a GPU); reports keep the specs' order"),
		retries:  fs.Int("retries", 0, "run an unexpected failure again up to `N` times: one that passes then is a flake, reported and not failing the run"),
		flakes:   fs.String("flakes", "", "known-flaky cases: `FILE` of regular expressions matched against whole case names; such a case that fails is a flake"),
		baseline: fs.String("baseline", "", "a previous run's results `FILE` (--results): its failures are expected; exit 1 only for new failures and for listed cases that now pass"),
		results:  fs.String("results", "", "write the results CSV (case,status,duration,rules) to `FILE` as cases finish"),
		flakeOut: fs.String("flakes-out", "", "list this run's flakes in `FILE`, one pattern a line: a --flakes file"),
	}
}

// load reads the flake list and the baseline.
func (c *ciFlags) load(ctx context.Context) error {
	if *c.jobs < 0 || *c.retries < 0 {
		return fmt.Errorf("-j and --retries take a number of 0 or more")
	}
	if *c.flakes != "" {
		data, err := readInput(ctx, *c.flakes, maxListBytes)
		fl := runner.Flakes{}
		if err == nil {
			fl, err = runner.ParseFlakes(*c.flakes, data)
		}
		if err != nil {
			return fmt.Errorf("--flakes: %w", err)
		}
		c.fl = fl
	}
	if *c.baseline != "" {
		data, err := readInput(ctx, *c.baseline, maxResultsBytes)
		b := runner.Baseline{}
		if err == nil {
			b, err = runner.ReadBaseline(*c.baseline, bytes.NewReader(data))
		}
		if err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
		c.base = b
	}
	return nil
}

// defaultJobs is how many specs a target runs at once unless told: one on
// a GPU (its runs would share the device), every core otherwise (each run
// is its own simulator, or its own driver process).
func defaultJobs(tg target.Target) int {
	if tg.Name() == "cuda" || tg.Name() == "rocr" {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// jobsFor is -j, or the target's default.
func (c *ciFlags) jobsFor(tg target.Target) int {
	if *c.jobs > 0 {
		return *c.jobs
	}
	return defaultJobs(tg)
}

// retry is how unexpected failures are rerun: --retries, the known flakes,
// and the baseline's expected failures (not rerun).
func (c *ciFlags) retry() runner.Retry {
	r := runner.Retry{Retries: *c.retries, Flakes: c.fl}
	if c.base.Failing != nil {
		r.Expected = func(name string) bool { _, ok := c.base.Failing[name]; return ok }
	}
	return r
}

// inputs and outputs are the files the flags read and write, for the
// check that no output is an input.
func (c *ciFlags) inputs() []namedPath {
	var out []namedPath
	if *c.flakes != "" {
		out = append(out, namedPath{"--flakes", *c.flakes})
	}
	if *c.baseline != "" {
		out = append(out, namedPath{"--baseline", *c.baseline})
	}
	return out
}

func (c *ciFlags) outputs() []namedPath {
	var out []namedPath
	if *c.results != "" {
		out = append(out, namedPath{"--results", *c.results})
	}
	if *c.flakeOut != "" {
		out = append(out, namedPath{"--flakes-out", *c.flakeOut})
	}
	return out
}

// openResults starts the results CSV, when asked for; close it after.
func (c *ciFlags) openResults(outs *outputSet) (*report.CSV, *streamOut, error) {
	if *c.results == "" {
		return nil, nil, nil
	}
	f, err := outs.stream(*c.results)
	if err != nil {
		return nil, nil, err
	}
	csv, err := report.NewCSV(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return csv, f, nil
}

// writeFlakesOut lists this run's flakes, one pattern a line: a --flakes
// file.
func (c *ciFlags) writeFlakesOut(outs *outputSet, flakes []runner.Attempted) error {
	if *c.flakeOut == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("# flakes of this run: cases that failed, then passed on a rerun (or listed as known-flaky)\n")
	for _, f := range flakes {
		b.WriteString(regexp.QuoteMeta(f.Result.Spec.Name) + "\n")
	}
	return outs.write(*c.flakeOut, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err })
}

// exit is the run's status once flakes and the baseline are counted: a
// flake never fails it; with a baseline only new failures and listed cases
// that now pass do. It says on w what changed.
func (c *ciFlags) exit(w io.Writer, code int, cases []runner.Result, flakes []runner.Attempted) int {
	flaky := map[string]runner.Attempted{}
	for _, f := range flakes {
		flaky[f.Result.Spec.Name] = f
		why := fmt.Sprintf("failed, then passed on attempt %d", f.Attempts)
		if f.Known != "" {
			why = fmt.Sprintf("failed on all %d attempts, listed in %s as %q", f.Attempts, c.fl.File, f.Known)
		}
		fmt.Fprintf(w, "flake: %s (%s)\n", report.Name(f.Result.Spec.Name), report.Name(why))
	}
	if c.base.Failing == nil && len(flakes) == 0 {
		return code
	}
	if c.base.Failing == nil {
		// Flakes do not fail the run; everything else counts as before.
		for _, r := range cases {
			if _, ok := flaky[r.Spec.Name]; ok {
				continue
			}
			if v := r.Verdict(); v == runner.Fail || v == runner.Error {
				return exitFail
			}
		}
		return exitOK
	}
	counts := map[runner.Change]int{}
	out := exitOK
	for _, r := range cases {
		a, ok := flaky[r.Spec.Name]
		if !ok {
			a = runner.Attempted{Result: r, Attempts: 1}
		}
		ch := c.base.Compare(r.Spec.Name, a)
		counts[ch]++
		switch ch {
		case runner.NewFailure:
			fmt.Fprintf(w, "new failure: %s\n", report.Name(r.Spec.Name))
		case runner.Fixed:
			fmt.Fprintf(w, "fixed: %s (listed as failing in %s: remove it from the baseline)\n", report.Name(r.Spec.Name), report.Name(c.base.File))
		}
		if ch.Fails() {
			out = exitFail
		}
	}
	fmt.Fprintf(w, "against %s: %d new failures, %d fixed, %d still failing, %d flakes\n", c.base.File,
		counts[runner.NewFailure], counts[runner.Fixed], counts[runner.StillFailing], counts[runner.Flaked])
	return out
}
