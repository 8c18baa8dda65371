package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{
		name:    "report",
		summary: "write the compliance matrix (Markdown or JSON) or the HTML report, of a run or of saved results",
		run:     runReport,
	})
}

var reportHelp = help{
	name:     "report",
	synopsis: "[--target T] [--xfail FILE] [--format markdown|json] [--out FILE] [--html FILE] [SPEC|DIR...]\n       replayspec report --from RESULTS.json... [--traces DIR] [--baseline FILE] [--compare OTHER.json] --html FILE",
	about: `Runs the specs on the target and writes the compliance matrix: every rule of
the catalogue with its status (passed, failed, expected failure, skipped, error,
not claimed, not covered) over the specs that name it or fail it, then every
spec (docs/compliance.md). --xfail names the port's known failures: a rule ID
or spec name a line, with a reason; a listed one that passes is an error.
Failures and errors are also told on stderr. Exit 1 when anything failed that
the list does not name, or a listed failure passed.

--html FILE writes the report as one self-contained HTML page (no network,
nothing beside it): the summary, the compliance matrix (filterable), every spec
with its rules and time, each failing spec open on its violations with the
events they cite, and a timeline of each dispatch. With --from, nothing runs:
the page (and the matrix) is made from saved JSON results ('run --format json'
or 'merge --format json'; several files are joined like merge), with each
spec's trace read from its trace_file or from --traces DIR (run --trace-out
DIR) for the timelines. --baseline (a results CSV or a JSON stream of an
earlier run) adds new failures, fixed and flaky cases; --compare (another
target's JSON results of the same specs) adds where the two differ, verdicts
and, where both traces are at hand, each dispatch's first divergence (as
'replayspec diff').`,
	examples: []string{
		"replayspec report specs/",
		`replayspec report --target exec:"python3 my_driver.py" --xfail known-failures.txt --out COMPLIANCE.md specs/`,
		`replayspec report --target exec:"replayspec driver" --format json --out compliance.json specs/`,
		"replayspec report --html report.html specs/",
		"replayspec run --format json --trace-out traces specs/ > results.json; replayspec report --from results.json --traces traces --html report.html",
		"replayspec report --from port.json --compare sim.json --baseline last.csv --html report.html",
	},
}

func runReport(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(reportHelp.name)
	targetName := fs.String("target", "sim", "the implementation under test: sim, cuda, rocr or exec:COMMAND")
	xfailFile := fs.String("xfail", "", "the port's expected failures: `FILE` of rule IDs or spec names, each with a reason")
	format := fs.String("format", "markdown", "markdown or json")
	outFile := fs.String("out", "", "write the matrix to `FILE` instead of stdout")
	timeout := fs.Duration("timeout", 60*time.Second, "give up on a spec after this `duration`")
	var hf htmlFlags
	hf.add(fs)
	var budget traceBudget
	budget.add(fs)
	paths, code, ok := parseFlags(fs, reportHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	// With --html and neither --out nor --format, the page is what was
	// asked for: the matrix is not written on stdout too.
	matrixWanted := hf.html == ""
	fs.Visit(func(f *flag.Flag) { matrixWanted = matrixWanted || f.Name == "out" || f.Name == "format" })
	if len(hf.from) > 0 {
		if len(paths) > 0 {
			return usageError(stderr, "report", "--from reads saved results: name no spec (%s), or leave --from out to run them", paths[0])
		}
		return hf.fromResults(ctx, *format, *outFile, matrixWanted, *xfailFile, args, stdout, stderr)
	}
	if err := hf.check(); err != nil {
		return usageError(stderr, "report", "%v", err)
	}
	if err := checkFormat(*format, []string{"markdown", "json"}); err != nil {
		return usageError(stderr, "report", "--format: %v", err)
	}
	if err := budget.check(); err != nil {
		return usageError(stderr, "report", "%v", err)
	}
	if *timeout <= 0 {
		return usageError(stderr, "report", "--timeout %s: want a positive duration such as 30s or 2m", *timeout)
	}
	var xf runner.XFail
	if *xfailFile != "" {
		var err error
		if xf, err = loadXFail(ctx, *xfailFile); err != nil {
			return inputError(stderr, "report", fmt.Errorf("--xfail: %w", err), "")
		}
	}
	specs, err := loadSpecs(ctx, paths, spec.MaxBytes)
	if err != nil {
		return inputError(stderr, "report", err, loadHint(err))
	}
	if *xfailFile != "" {
		if err := xf.Check(specNames(specs)); err != nil {
			return inputError(stderr, "report", fmt.Errorf("--xfail: %w", err), "Every line names a rule ID or the name of a spec the run loads.")
		}
	}
	inputs := specInputs(specs)
	if *xfailFile != "" {
		inputs = append(inputs, namedPath{"--xfail", *xfailFile})
	}
	outs, err := guardOutputs(append(inputs, hf.inputs()...), hf.outputs(*outFile))
	if err != nil {
		return usageError(stderr, "report", "%v", err)
	}
	tg, err := openTarget(*targetName, nil, budget.mib)
	if err != nil {
		return inputError(stderr, "report", err, "")
	}
	impl, families := identity(tg)
	var page *report.HTMLPage
	if hf.html != "" {
		if page, err = hf.page(ctx, tg.Name(), impl, families, *xfailFile, commandLine("report", args)); err != nil {
			return inputError(stderr, "report", err, "")
		}
	}
	// As run does: each spec judged as it is recorded, its events spooled
	// for the page and drawn once it is done, then forgotten; the matrix
	// needs only the verdicts.
	partials := newPartials(tg, outputPlan{}, page != nil)
	opts := runner.Options{Target: tg, Timeout: *timeout}
	opts.Stream = partials.streams() && !holdTraces
	var results []runner.Result
	var pageErr error
	pageLost := ""
	runner.RunPlan(ctx, specs, opts, runner.Plan{Summaries: true, Record: partials.record(),
		Done: func(_, _ int, a runner.Attempted) {
			r := a.Result
			spooled, spoolErr := partials.take(r)
			defer spooled.discard()
			if page != nil && pageErr == nil {
				events := report.EventsOf(r.Trace)
				if spooled != nil {
					events = spooled.events()
				}
				rec := report.Record(xf.Outcome(r), report.Options{XFailFile: *xfailFile})
				if spoolErr != nil {
					pageErr, pageLost = spoolErr, "the temporary copy of "+report.CaseName(rec)+"'s events failed"
				} else if err := page.AddFrom(rec, events); err != nil {
					pageErr, pageLost = err, "the timelines of "+report.CaseName(rec)+" could not be drawn"
				}
			}
			dropEvents(&r)
			results = append(results, r)
		}})
	outcomes := xf.Apply(results)
	m := report.BuildMatrix(outcomes, families)
	m.Target, m.Implementation = tg.Name(), impl

	if matrixWanted {
		if err := writeMatrixTo(outs, m, *format, *outFile, stdout); err != nil {
			fmt.Fprintf(stderr, "replayspec report: %v\n", err)
			return exitIO
		}
	}
	if page != nil {
		var end report.End
		if *xfailFile != "" {
			end.Stale = report.StaleOf(*xfailFile, xf.Stale(outcomes))
		}
		if pageErr != nil {
			err := &outputError{Flag: "--html", Path: hf.html, Err: pageErr, Left: pageLost + ", so the page was not written"}
			fmt.Fprintf(stderr, "replayspec report: %v\n", err)
			return exitIO
		}
		if err := writeHTML(outs, hf.html, page, end); err != nil {
			fmt.Fprintf(stderr, "replayspec report: %v\n", err)
			return exitIO
		}
	}
	// What went wrong is told on stderr too, so that a matrix written to a
	// file does not hide it.
	for _, o := range outcomes {
		if o.Status == runner.Failed || o.Status == runner.Errored {
			fmt.Fprintf(stderr, "%s: %s\n%s\n", report.Name(o.Result.Spec.Name), o.Status, report.Clean(indent(detail(o), "  "), true))
		}
	}
	if runner.Unexpected(outcomes) {
		return exitFail
	}
	return exitOK
}

// writeMatrixTo writes the matrix in format to file (through the guard),
// or to stdout.
func writeMatrixTo(outs *outputSet, m report.Matrix, format, file string, stdout io.Writer) error {
	var buf bytes.Buffer
	var err error
	if format == "json" {
		err = m.WriteJSON(&buf)
	} else {
		err = m.WriteMarkdown(&buf)
	}
	switch {
	case err != nil:
		return err
	case file != "":
		return outs.write(file, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return stdoutError(err)
	}
	return nil
}

// detail is why an outcome is bad, with the violations when there are.
func detail(o runner.Outcome) string {
	var b strings.Builder
	b.WriteString(o.Reason)
	if o.Result.Err != nil && !strings.Contains(o.Reason, o.Result.Err.Error()) {
		b.WriteString("\n" + o.Result.Err.Error())
	}
	for _, v := range o.Result.Violations {
		b.WriteString("\n" + v.String())
	}
	return b.String()
}
