package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target/exec"
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
over each. The trace's spec is found by the name in its header among the
built-in library, or given with --spec: then its expectations are checked too,
and every rule it names must have been exercised. A trace in which no oracle
found anything to examine fails: silence is not a pass. Reports like 'run'.`,
	examples: []string{
		"replayspec check out/fixed-three-passes.ndjson",
		"replayspec check --spec my-spec.yaml my-port.ndjson",
		"replayspec check --format json port-traces/*.ndjson",
	},
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(checkHelp.name)
	format := fs.String("format", "text", "report format: text, json or junit")
	quiet := fs.Bool("quiet", false, "leave passing traces out of the text report")
	specFile := fs.String("spec", "", "the spec the traces were recorded from (`FILE`); default: the library spec named in each trace's header")
	maxMiB := fs.Int64("max-input-mib", defaultTraceMiB, "the budget of a trace: refuse one larger than this many `MiB` (a file at once, a pipe as soon as it passes it; a trace takes about 9 times its size in memory once read)")
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
	var given []spec.Spec
	if *specFile != "" {
		cases, err := spec.LoadCases(*specFile)
		if err != nil {
			return inputError(stderr, "check", fmt.Errorf("--spec: %w", err), "")
		}
		given = cases
	}
	if *maxMiB < 1 || *maxMiB > maxOptionMiB {
		return usageError(stderr, "check", "--max-input-mib %d: want 1 to %d MiB", *maxMiB, maxOptionMiB)
	}
	var results []runner.Result
	opts := report.Options{Quiet: *quiet, TraceFiles: map[string]string{}}
	unreadable, missing := 0, 0
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		t, err := untilDone(ctx, func() (trace.Trace, error) { return readTrace(f, *maxMiB<<20) })
		if errors.Is(err, errReadInterrupted) {
			fmt.Fprintf(stderr, "replayspec check: %s: %v\n", f, err)
			break
		}
		if err != nil {
			unreadable++
			if errors.Is(err, os.ErrNotExist) {
				missing++
			}
			fmt.Fprintf(stderr, "replayspec check: %s\n", report.Clean(err.Error(), false))
			continue
		}
		start := time.Now()
		s, known := specOf(t, given)
		if s.Name == "" {
			s.Name = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		}
		if opts.TraceFiles[s.Name] != "" {
			s.Name += " (" + f + ")"
		}
		opts.TraceFiles[s.Name] = f
		if opts.Target == "" {
			opts.Target = t.Header.Target
		}
		r := runner.Result{Spec: s, Trace: t}
		runner.Judge(&r, s, t)
		if !known {
			fmt.Fprintf(stderr, "replayspec check: %s: no spec named %q in the library and no --spec: judged by the rule oracles alone\n", f, t.Header.Spec)
		}
		r.Elapsed = time.Since(start)
		results = append(results, r)
	}
	if missing > 0 {
		fmt.Fprintln(stderr, "Check the path: name trace files written by 'replayspec run --trace-out' or by a port.")
	}
	if unreadable > missing {
		fmt.Fprintln(stderr, "A trace is NDJSON: a header line, then one event per line; docs/trace.md has the schema.")
	}
	if len(results) > 0 {
		if err := report.Write(stdout, *format, report.Outcomes(results), opts, report.End{}); err != nil {
			fmt.Fprintf(stderr, "replayspec check: %v\n", stdoutError(err))
			return exitIO
		}
	}
	if unreadable > 0 {
		return exitUsage
	}
	return exitFor(results)
}

// specOf is the spec a trace was recorded from: the one given (the case
// its header names, for a spec with a matrix), else the library spec its
// header names; known is false when there is none (the oracles alone
// judge it then).
func specOf(t trace.Trace, given []spec.Spec) (s spec.Spec, known bool) {
	if len(given) == 1 {
		return given[0], true
	}
	for _, g := range given {
		if g.Name == t.Header.Spec {
			return g, true
		}
	}
	if len(given) > 0 {
		return spec.Spec{Name: t.Header.Spec}, false
	}
	if s, ok := specs.ByName(t.Header.Spec); ok {
		return s, true
	}
	return spec.Spec{Name: t.Header.Spec}, false
}

// defaultTraceMiB is the budget of a trace that check reads: what an exec:
// driver may write for one spec (--max-trace-mib), and more than a spec
// within run's default --memory-budget records, so that check accepts what
// run --trace-out wrote. A trace takes about 9 times its size in memory
// once read and judged (a 115 MiB trace of 10,000 dispatches, 1.0-1.1 GiB).
const defaultTraceMiB = exectarget.DefaultMaxBytes >> 20

// readTrace reads one NDJSON trace of at most limit bytes; errors name the
// file and line. A regular file's size is known at once; anything else (a
// pipe, a FIFO, a device) is spooled to an unlinked temporary file as it
// comes, and refused as soon as it passes the budget, so that neither
// memory nor the parse grows with what is refused.
func readTrace(path string, limit int64) (trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return trace.Trace{}, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	overBudget := func(what string) error {
		return fmt.Errorf("%s: %s, over the budget of %d MiB a trace may hold: raise --max-input-mib if the machine has the memory (a trace takes about 9 times its size once read)", path, what, limit>>20)
	}
	var in io.Reader = f
	fi, err := f.Stat()
	switch {
	case err == nil && fi.IsDir():
		return trace.Trace{}, fmt.Errorf("%s is a directory: name the trace files in it", path)
	case err == nil && fi.Mode().IsRegular():
		if fi.Size() > limit {
			return trace.Trace{}, overBudget(fmt.Sprintf("%d MiB", fi.Size()>>20))
		}
	default:
		spool, err := scratchFile("replayspec-check-*.ndjson")
		if err != nil {
			return trace.Trace{}, fmt.Errorf("%s: cannot spool it to a temporary file: %w (set TMPDIR to a writable directory)", path, err)
		}
		defer spool.Close()
		n, err := io.Copy(spool, &io.LimitedReader{R: f, N: limit + 1})
		switch {
		case n > limit:
			return trace.Trace{}, overBudget(fmt.Sprintf("more than %d MiB read", limit>>20))
		case err != nil:
			return trace.Trace{}, fmt.Errorf("%s: %w", path, err)
		}
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return trace.Trace{}, fmt.Errorf("%s: %w", path, err)
		}
		in = spool
	}
	// A regular file that grows while it is read is held to the budget too.
	lr := &io.LimitedReader{R: in, N: limit + 1}
	t, err := trace.Read(lr)
	if lr.N <= 0 {
		return trace.Trace{}, overBudget(fmt.Sprintf("more than %d MiB read", limit>>20))
	}
	if err != nil {
		var pe *trace.ParseError
		if errors.As(err, &pe) {
			return t, fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err)
		}
		return t, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
