package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

func init() {
	register(command{name: "check", summary: "judge recorded NDJSON traces with the rule oracles", run: checkCmd})
}

var checkHelp = help{
	name:     "check",
	synopsis: "[options] TRACE.ndjson...",
	about: `Reads traces recorded elsewhere (by 'replayspec run --trace-out', a hardware
target or an external port; format in docs/trace.md) and runs every rule oracle
over each. A spec's own expectations are not checked: a trace does not carry
its spec. Reports like 'run'.`,
	examples: []string{
		"replayspec check out/fixed-three-passes.ndjson",
		"replayspec check --format json port-traces/*.ndjson",
	},
}

func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(checkHelp.name)
	format := fs.String("format", "text", "report format: text, json or junit")
	quiet := fs.Bool("quiet", false, "leave passing traces out of the text report")
	files, code, ok := parseFlags(fs, checkHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if err := checkFormat(*format, formats); err != nil {
		return usageError(stderr, "check", "--format: %v", err)
	}
	if len(files) == 0 {
		return usageError(stderr, "check", "no trace given: name NDJSON trace files, e.g. replayspec check out/trace.ndjson")
	}
	var results []runner.Result
	opts := report.Options{Quiet: *quiet, TraceFiles: map[string]string{}}
	unreadable := 0
	for _, f := range files {
		t, err := readTrace(f)
		if err != nil {
			unreadable++
			fmt.Fprintf(stderr, "replayspec check: %v\n", err)
			continue
		}
		start := time.Now()
		vs := check.Trace(t)
		name := t.Header.Spec
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		}
		if opts.TraceFiles[name] != "" {
			name += " (" + f + ")"
		}
		opts.TraceFiles[name] = f
		if opts.Target == "" {
			opts.Target = t.Header.Target
		}
		results = append(results, runner.Result{Spec: spec.Spec{Name: name}, Trace: t, Violations: vs, Elapsed: time.Since(start)})
	}
	if unreadable > 0 {
		fmt.Fprintln(stderr, "A trace is NDJSON: a header line, then one event per line; docs/trace.md has the schema.")
	}
	if len(results) > 0 {
		if err := writeReport(stdout, *format, results, opts); err != nil {
			fmt.Fprintf(stderr, "replayspec check: writing the report: %v\n", err)
			return exitUsage
		}
	}
	if unreadable > 0 {
		return exitUsage
	}
	return exitFor(results)
}

// readTrace reads one NDJSON trace; errors name the file and line.
func readTrace(path string) (trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return trace.Trace{}, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	t, err := trace.Read(f)
	if err != nil {
		var pe *trace.ParseError
		if errors.As(err, &pe) {
			return t, fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err)
		}
		return t, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
