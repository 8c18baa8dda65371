package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/driver/protocol"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/target"
)

func init() {
	register(command{
		name:    "report",
		summary: "run specs and write a compliance matrix (rule x status) as Markdown or JSON",
		run:     runReport,
	})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	targetName := fs.String("target", "sim", "the implementation under test: sim, cuda, rocr or exec:COMMAND")
	xfailFile := fs.String("xfail", "", "the port's expected failures: a file of rule IDs or spec names, each with a reason")
	format := fs.String("format", "markdown", "markdown or json")
	outFile := fs.String("out", "", "write the matrix to this file instead of stdout")
	timeout := fs.Duration("timeout", 0, "bound on one spec (default 60s)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: replayspec report [--target T] [--xfail FILE] [--format markdown|json] [--out FILE] SPEC|DIR...

Runs the specs on the target and writes the compliance matrix: every rule of
the catalogue with its status (passed, failed, expected failure, skipped,
error, not claimed, not covered) over the specs that name it or fail it, then
every spec. docs/compliance.md explains it.

  replayspec report --target exec:"python3 my_driver.py" --xfail known.txt --out COMPLIANCE.md specs/

Exit status: 0 nothing failed unexpectedly, 1 a failure not listed or a listed
failure that passed, 2 bad input or usage.

Options:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *format != "markdown" && *format != "json" {
		fmt.Fprintf(stderr, "replayspec report: --format %q: use markdown or json\n", *format)
		return exitUsage
	}
	var xf driver.XFail
	if *xfailFile != "" {
		var err error
		if xf, err = driver.LoadXFail(*xfailFile); err != nil {
			fmt.Fprintf(stderr, "replayspec report: --xfail: %v\n", err)
			return exitUsage
		}
	}
	specs, err := runner.Collect(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "replayspec report: %v\n", err)
		return exitUsage
	}
	tg, err := target.Open(*targetName)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec report: %v\n", err)
		return exitUsage
	}
	results := runner.RunAll(context.Background(), specs, runner.Options{Target: tg, Timeout: *timeout}, nil)
	outcomes := xf.Apply(results)

	var families []string
	impl := protocol.Implementation{Name: "replayspec reference engine", Version: driverVersion}
	if e, ok := tg.(*target.Exec); ok {
		families = e.Families()
		impl = e.Handshake().Implementation
	} else if tg.Name() != "sim" {
		impl = protocol.Implementation{Name: tg.Name()}
	}
	m := driver.BuildMatrix(outcomes, families)
	m.Target, m.Implementation = tg.Name(), impl

	var buf bytes.Buffer
	if *format == "json" {
		err = m.WriteJSON(&buf)
	} else {
		err = m.WriteMarkdown(&buf)
	}
	if err == nil && *outFile != "" {
		err = os.WriteFile(*outFile, buf.Bytes(), 0o644)
	} else if err == nil {
		_, err = stdout.Write(buf.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "replayspec report: %v\n", err)
		return exitUsage
	}
	// What went wrong is told on stderr too, so that a matrix written to a
	// file does not hide it.
	for _, o := range outcomes {
		if o.Status == driver.Failed || o.Status == driver.Errored {
			fmt.Fprintf(stderr, "%s: %s\n%s\n", o.Result.Spec.Name, o.Status, indent(detail(o), "  "))
		}
	}
	if driver.Unexpected(outcomes) {
		return exitFail
	}
	return exitOK
}

// detail is why an outcome is bad, with the violations when there are.
func detail(o driver.Outcome) string {
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
