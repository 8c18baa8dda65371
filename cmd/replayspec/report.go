package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target/exec"
)

func init() {
	register(command{
		name:    "report",
		summary: "run specs and write a compliance matrix (rule x status) as Markdown or JSON",
		run:     runReport,
	})
}

var reportHelp = help{
	name:     "report",
	synopsis: "[--target T] [--xfail FILE] [--format markdown|json] [--out FILE] [SPEC|DIR...]",
	about: `Runs the specs on the target and writes the compliance matrix: every rule of
the catalogue with its status (passed, failed, expected failure, skipped, error,
not claimed, not covered) over the specs that name it or fail it, then every
spec (docs/compliance.md). --xfail names the port's known failures: a rule ID
or spec name a line, with a reason; a listed one that passes is an error.
Failures and errors are also told on stderr. Exit 1 when anything failed that
the list does not name, or a listed failure passed.`,
	examples: []string{
		"replayspec report specs/",
		`replayspec report --target exec:"python3 my_driver.py" --xfail known-failures.txt --out COMPLIANCE.md specs/`,
		`replayspec report --target exec:"replayspec driver" --format json --out compliance.json specs/`,
	},
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(reportHelp.name)
	targetName := fs.String("target", "sim", "the implementation under test: sim, cuda, rocr or exec:COMMAND")
	xfailFile := fs.String("xfail", "", "the port's expected failures: `FILE` of rule IDs or spec names, each with a reason")
	format := fs.String("format", "markdown", "markdown or json")
	outFile := fs.String("out", "", "write the matrix to `FILE` instead of stdout")
	timeout := fs.Duration("timeout", 60*time.Second, "give up on a spec after this `duration`")
	paths, code, ok := parseFlags(fs, reportHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if err := checkFormat(*format, []string{"markdown", "json"}); err != nil {
		return usageError(stderr, "report", "--format: %v", err)
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
	var declared []namedPath
	if *outFile != "" {
		declared = append(declared, namedPath{"--out", *outFile})
	}
	outs, err := guardOutputs(inputs, declared)
	if err != nil {
		return usageError(stderr, "report", "%v", err)
	}
	tg, err := openTarget(*targetName, nil)
	if err != nil {
		return inputError(stderr, "report", err, "")
	}
	results := runner.RunAll(ctx, specs, runner.Options{Target: tg, Timeout: *timeout}, nil)
	outcomes := xf.Apply(results)

	var families []string
	impl := driver.Implementation{Name: "replayspec reference engine", Version: driverVersion}
	if e, ok := tg.(*exectarget.Exec); ok {
		families = e.Families()
		impl = e.Handshake().Implementation
	} else if tg.Name() != "sim" {
		impl = driver.Implementation{Name: tg.Name()}
	}
	m := report.BuildMatrix(outcomes, families)
	m.Target, m.Implementation = tg.Name(), impl

	var buf bytes.Buffer
	if *format == "json" {
		err = m.WriteJSON(&buf)
	} else {
		err = m.WriteMarkdown(&buf)
	}
	if err != nil {
		fmt.Fprintf(stderr, "replayspec report: %v\n", err)
		return exitInternal // a matrix in memory that cannot be written is a bug
	}
	if *outFile != "" {
		err = outs.write(*outFile, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
	} else if _, werr := stdout.Write(buf.Bytes()); werr != nil {
		err = stdoutError(werr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "replayspec report: %v\n", err)
		return exitIO
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
