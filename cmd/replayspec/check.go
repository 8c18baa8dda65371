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

	"github.com/replayspec/replayspec/check"
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

func checkCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(checkHelp.name)
	format := fs.String("format", "text", "report format: text, json or junit")
	quiet := fs.Bool("quiet", false, "leave passing traces out of the text report")
	specFile := fs.String("spec", "", "the spec the traces were recorded from (`FILE`); default: the library spec named in each trace's header")
	maxMiB := fs.Int64("max-input-mib", defaultTraceMiB, "the budget of a trace judged whole: refuse one larger than this many `MiB` (a trace takes about 9 times its size in memory once read). A trace is judged as it is read, with its spec's expectations, in bounded memory, whatever its size, unless the oracles must see it whole")
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
		start := time.Now() // a trace judged as it is read is judged here
		got, err := untilDone(ctx, func() (checked, error) { return judgeOrRead(f, given, false, *maxMiB<<20) })
		t, streamed := got.t, got.streamed
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
		if streamed != nil {
			runner.JudgeStreamed(&r, s, streamed.judgement, streamed.expected, streamed.unobserved, streamed.tally)
		} else {
			runner.Judge(&r, s, t)
		}
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

// checked is a trace read whole (t), or judged as a stream (streamed: t
// then holds its header only).
type checked struct {
	t        trace.Trace
	streamed *streamedTrace
}

// streamedTrace is the oracles' judgement of a trace judged as a stream,
// and its spec's expectations (check.Stream.Expectations).
type streamedTrace struct {
	judgement  check.Judgement
	expected   []check.Violation
	unobserved []string
	tally      *runner.Tally
}

// errJudgeWhole stops a streamed read of a trace the oracles cannot judge
// a segment at a time.
var errJudgeWhole = errors.New("judged whole")

// judgeOrRead judges the trace at path as it reads it, with the
// expectations of the spec in given its header names (specOf), in memory
// bounded by what is in flight in it rather than by its size
// (check.Stream), when the oracles can judge it a segment at a time;
// otherwise, or with whole set, it reads the trace whole, held to the
// budget limit. What a pipe gives is copied to a temporary file as it is
// read, up to the budget, so that it can be read whole again when it must.
func judgeOrRead(path string, given []spec.Spec, whole bool, limit int64) (checked, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return checked{}, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		return checked{}, fmt.Errorf("%s is a directory: name the trace files in it", path)
	}
	in, again := io.Reader(f), f
	var spool *capped
	if err != nil || !fi.Mode().IsRegular() {
		file, err := scratchFile("replayspec-check-*.ndjson")
		if err != nil {
			return checked{}, fmt.Errorf("%s: cannot copy it to a temporary file: %w (set TMPDIR to a writable directory)", path, err)
		}
		defer file.Close()
		spool = &capped{f: file, left: limit + 1}
		in, again = io.TeeReader(f, spool), file
	}
	// No bufio.Reader: ReadBatches reads blocks of its own size straight
	// into its chunks, and a buffer between was one more copy of the trace.
	var h trace.Header
	var got *streamedTrace
	err = errJudgeWhole
	if !whole {
		h, got, err = judgeAsRead(in, func(h trace.Header) spec.Spec {
			s, _ := specOf(trace.Trace{Header: h}, given)
			return s
		})
	}
	switch {
	case err == nil:
		return checked{t: trace.Trace{Header: h}, streamed: got}, nil
	case !errors.Is(err, errJudgeWhole):
		return checked{}, readError(path, err)
	}
	if spool != nil {
		// The rest of the pipe, up to the budget and a byte past it.
		if _, err := io.Copy(spool, io.LimitReader(f, max(spool.left, 0)+1)); err != nil {
			return checked{}, fmt.Errorf("%s: %w", path, err)
		}
		switch {
		case spool.err != nil:
			return checked{}, fmt.Errorf("%s: copying it to a temporary file: %w (set TMPDIR to a directory with room)", path, spool.err)
		case spool.over:
			return checked{}, overBudget(path, limit, fmt.Sprintf("more than %d MiB read", limit>>20))
		}
	}
	if _, err := again.Seek(0, io.SeekStart); err != nil {
		return checked{}, fmt.Errorf("%s: %w", path, err)
	}
	t, err := readWhole(again, path, limit)
	return checked{t: t}, err
}

// judgeAsRead judges the trace in r as a stream, reading and judging at
// once: goroutines cut and decode the lines (trace.ReadBatches) while this
// one judges the events they have decoded, a chunk at a time, and the
// expectations of the spec specFor names for the header. It returns
// errJudgeWhole when the oracles cannot judge the trace apart.
func judgeAsRead(r io.Reader, specFor func(trace.Header) spec.Spec) (trace.Header, *streamedTrace, error) {
	var h trace.Header
	var st *check.Stream
	var tally runner.TallyStream
	defer func() {
		if st != nil {
			st.Close() // a read that failed leaves it judging aside
		}
	}()
	err := trace.ReadBatches(r, 0, func(got trace.Header) error {
		h = got
		st = check.NewStream(h)
		st.Expect(specFor(h))
		st.JudgeAside() // a segment is judged while the next is read
		return nil
	}, func(b []trace.Event) error {
		for i := range b {
			tally.Add(&b[i])
			st.AddEvent(&b[i])
		}
		if !st.Separable() {
			return errJudgeWhole
		}
		return nil
	})
	if err != nil {
		return h, nil, err
	}
	j, ok := st.Finish() // st is made with the header, which a trace read without error has

	if !ok {
		return h, nil, errJudgeWhole
	}
	expected, unobserved := st.Expectations()
	return h, &streamedTrace{j, expected, unobserved, tally.Tally()}, nil
}

// capped writes to f until left bytes are spent and drops the rest,
// noting that there was more: what passes the budget is never read whole,
// so it need not be kept. It never fails a write (a TeeReader would fail
// the read); a failed write to f is kept in err.
type capped struct {
	f    *os.File
	left int64
	over bool
	err  error
}

func (c *capped) Write(p []byte) (int, error) {
	n := min(int64(len(p)), c.left)
	if n > 0 && c.err == nil {
		_, c.err = c.f.Write(p[:n])
	}
	c.left -= n
	if int64(len(p)) > n {
		c.over = true
	}
	return len(p), nil
}

// readTrace reads one NDJSON trace whole, of at most limit bytes; errors
// name the file and line.
func readTrace(path string, limit int64) (trace.Trace, error) {
	got, err := judgeOrRead(path, nil, true, limit)
	return got.t, err
}

// readWhole reads the trace in f (a file, or a pipe's copy) whole, refusing
// one larger than limit before it parses anything.
func readWhole(f *os.File, path string, limit int64) (trace.Trace, error) {
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return trace.Trace{}, overBudget(path, limit, fmt.Sprintf("%d MiB", fi.Size()>>20))
	}
	// A regular file that grows while it is read is held to the budget too.
	lr := &io.LimitedReader{R: f, N: limit + 1}
	t, err := trace.Read(lr)
	if lr.N <= 0 {
		return trace.Trace{}, overBudget(path, limit, fmt.Sprintf("more than %d MiB read", limit>>20))
	}
	if err != nil {
		return t, readError(path, err)
	}
	return t, nil
}

func overBudget(path string, limit int64, what string) error {
	return fmt.Errorf("%s: %s, over the budget of %d MiB a trace may hold: raise --max-input-mib if the machine has the memory (a trace takes about 9 times its size once read whole; it is read whole only when the oracles cannot judge it a segment at a time, docs/oracles.md)", path, what, limit>>20)
}

// readError names the file, and the line when the trace is malformed.
func readError(path string, err error) error {
	var pe *trace.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
