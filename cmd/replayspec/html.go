package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/internal/tracediff"
	"github.com/replayspec/replayspec/trace"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
)

// The HTML report's glue for run and report (report/html.go draws it).

// identity is what the page and the matrix say about a target: the
// implementation, and the rule families a port claims (nil: all).
func identity(tg target.Target) (driver.Implementation, []string) {
	if e, ok := tg.(*exectarget.Exec); ok {
		return e.Handshake().Implementation, e.Families()
	}
	if tg.Name() != "sim" {
		return driver.Implementation{Name: tg.Name()}, nil
	}
	return driver.Implementation{Name: "replayspec reference engine", Version: driverVersion}, nil
}

// htmlPage starts the page of a run on tg; base is the run's baseline
// (--baseline), if any.
func htmlPage(tg target.Target, command string, xfail string, base runner.Baseline) *report.HTMLPage {
	impl, fams := identity(tg)
	opts := report.HTMLOptions{Target: tg.Name(), Implementation: impl, Families: fams, Command: command, XFailFile: xfail}
	if base.Failing != nil {
		opts.Baseline = &base
	}
	return report.NewHTMLPage(opts)
}

// writeHTML writes a page to path, through the guard: whole, or not at all.
func writeHTML(outs *outputSet, path string, page *report.HTMLPage, end report.End) error {
	return outs.write(path, func(w io.Writer) error { return page.Write(w, end) })
}

// commandLine is a command as a shell would take it back, for the page.
func commandLine(name string, args []string) string {
	parts := []string{"replayspec", name}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// fileList collects a repeated option.
type fileList []string

func (l *fileList) String() string     { return strings.Join(*l, ",") }
func (l *fileList) Set(v string) error { *l = append(*l, v); return nil }

// htmlFlags are report's options for the HTML page.
type htmlFlags struct {
	html     string
	from     fileList
	traces   fileList
	baseline string
	compare  fileList

	compareFrom []string // the file each compared result came from
	opts        report.HTMLOptions
}

func (hf *htmlFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&hf.html, "html", "", "write the report as one self-contained HTML page to `FILE`")
	fs.Var(&hf.from, "from", "make the matrix and page from saved results instead of running: a JSON `FILE` of 'run --format json' or 'merge --format json' (repeat for shards)")
	fs.Var(&hf.traces, "traces", "with --from: a `DIR` of the run's traces (run --trace-out DIR), for the page's timelines (repeatable)")
	fs.StringVar(&hf.baseline, "baseline", "", "with --html: an earlier run's results (`FILE`, the --results CSV or a JSON stream): the page lists new failures, fixed and flaky cases")
	fs.Var(&hf.compare, "compare", "with --html: another target's JSON results of the same specs (`FILE`, repeat for shards): the page shows where the two differ")
}

// check refuses what only makes sense with the page or with --from.
func (hf *htmlFlags) check() error {
	switch {
	case hf.html == "" && (hf.baseline != "" || len(hf.compare) > 0):
		return fmt.Errorf("--baseline and --compare are views of the HTML page: add --html FILE")
	case len(hf.traces) > 0 && len(hf.from) == 0:
		return fmt.Errorf("--traces is where the traces of --from's results are: add --from RESULTS.json (a run's own traces are at hand)")
	}
	return nil
}

func (hf *htmlFlags) inputs() []namedPath {
	var in []namedPath
	for _, f := range hf.from {
		in = append(in, namedPath{"--from", f})
	}
	for _, f := range hf.compare {
		in = append(in, namedPath{"--compare", f})
	}
	if hf.baseline != "" {
		in = append(in, namedPath{"--baseline", hf.baseline})
	}
	return in
}

func (hf *htmlFlags) outputs(out string) []namedPath {
	var o []namedPath
	if out != "" {
		o = append(o, namedPath{"--out", out})
	}
	if hf.html != "" {
		o = append(o, namedPath{"--html", hf.html})
	}
	return o
}

// page starts the page, with the baseline and the other run loaded.
func (hf *htmlFlags) page(ctx context.Context, target string, impl driver.Implementation, families []string, xfail, command string) (*report.HTMLPage, error) {
	opts := report.HTMLOptions{Target: target, Implementation: impl, Families: families, Command: command, XFailFile: xfail}
	if hf.baseline != "" {
		b, err := loadBaseline(hf.baseline)
		if err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		opts.Baseline = &b
	}
	if len(hf.compare) > 0 {
		c := &report.HTMLCompare{File: strings.Join(hf.compare, ", "), Divergences: map[string][]report.HTMLDivergence{}}
		var targets []string
		for _, f := range hf.compare {
			start, recs, _, err := readResults(ctx, f)
			if err != nil {
				return nil, fmt.Errorf("--compare: %w", err)
			}
			if start.Target != "" && !slices.Contains(targets, start.Target) {
				targets = append(targets, start.Target)
			}
			for _, r := range recs {
				c.Results = append(c.Results, r)
				hf.compareFrom = append(hf.compareFrom, f)
			}
		}
		c.Target = strings.Join(targets, "+")
		if c.Target == "" || c.Target == target {
			c.Target = "the other run"
		}
		opts.Compare = c
	}
	hf.opts = opts
	return report.NewHTMLPage(opts), nil
}

// loadBaseline reads a results CSV, or a JSON stream whose failures and
// errors become the baseline.
func loadBaseline(path string) (runner.Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return runner.Baseline{}, err
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		_, recs, _, err := report.ReadJSON(bytes.NewReader(b))
		if err != nil {
			return runner.Baseline{}, fmt.Errorf("%s: %w", path, err)
		}
		return report.BaselineOf(path, recs), nil
	}
	return runner.ReadBaseline(path, bytes.NewReader(b))
}

// traceFileOf finds the trace file of a saved result: its trace_file (as
// written, or beside the results file), or NAME.ndjson in a --traces
// directory; the first whose header reads is taken, unless it is another
// spec's. Only its header is read here: the page reads the events as a
// stream (fileEvents), so a trace of any size is drawn.
func (hf *htmlFlags) traceFileOf(r report.JSONResult, from string) string {
	var cands []string
	if r.TraceFile != "" {
		cands = append(cands, r.TraceFile)
		if !filepath.IsAbs(r.TraceFile) {
			cands = append(cands, filepath.Join(filepath.Dir(from), r.TraceFile))
		}
	}
	base := fileName(r.Name)
	if r.Run > 0 {
		base = fmt.Sprintf("%s.run%d", base, r.Run)
	}
	for _, d := range hf.traces {
		cands = append(cands, filepath.Join(d, base+".ndjson"))
		if r.TraceFile != "" {
			cands = append(cands, filepath.Join(d, filepath.Base(r.TraceFile)))
		}
	}
	for _, c := range cands {
		if h, err := traceHeader(c); err == nil && (h.Spec == "" || h.Spec == r.Name) {
			return c
		}
	}
	return ""
}

// errHeaderRead stops a reading at the header.
var errHeaderRead = errors.New("header read")

// traceHeader reads the header of the trace file path.
func traceHeader(path string) (trace.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return trace.Header{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return trace.Header{}, fmt.Errorf("%s is not a file", path) // a pipe could not be read again
	}
	var h trace.Header
	err = trace.ReadEach(bufio.NewReaderSize(f, 1<<16), func(got trace.Header) error { h = got; return errHeaderRead }, nil)
	if !errors.Is(err, errHeaderRead) {
		if err == nil {
			err = errors.New("no header")
		}
		return trace.Header{}, err
	}
	return h, nil
}

// fileEvents reads the events of the trace file path, each time from its
// start, holding none of them; its errors name the file and line.
func fileEvents(path string) report.Events {
	return func(each func(*trace.Event) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var stopped error // each's own error, handed back as it is
		err = trace.ReadEach(bufio.NewReaderSize(f, 1<<16), func(trace.Header) error { return nil }, func(e *trace.Event) error {
			stopped = each(e)
			return stopped
		})
		if err != nil && err != stopped {
			return readError(path, err)
		}
		return err
	}
}

// fromResults is report --from: the matrix and the page of saved results.
func (hf *htmlFlags) fromResults(ctx context.Context, format, out string, matrixWanted bool, xfailFile string, args []string, stdout, stderr io.Writer) int {
	if err := hf.check(); err != nil {
		return usageError(stderr, "report", "%v", err)
	}
	inputs := hf.inputs()
	if xfailFile != "" {
		inputs = append(inputs, namedPath{"--xfail", xfailFile})
	}
	outs, err := guardOutputs(inputs, hf.outputs(out))
	if err != nil {
		return usageError(stderr, "report", "%v", err)
	}
	var xf runner.XFail
	if xfailFile != "" {
		var err error
		if xf, err = loadXFail(ctx, xfailFile); err != nil {
			return inputError(stderr, "report", fmt.Errorf("--xfail: %w", err), "")
		}
	}
	var records []report.JSONResult
	var fromFile, targets, stopped []string
	for _, f := range hf.from {
		start, recs, end, err := readResults(ctx, f)
		if err != nil {
			return inputError(stderr, "report", fmt.Errorf("--from: %w", err), "Each file is the stdout of 'replayspec run --format json' or 'replayspec merge --format json'.")
		}
		if start.Target != "" && !slices.Contains(targets, start.Target) {
			targets = append(targets, start.Target)
		}
		if end.Stopped != "" {
			stopped = append(stopped, f+": "+end.Stopped)
		}
		for _, r := range recs {
			records = append(records, r)
			fromFile = append(fromFile, f)
		}
	}
	target := strings.Join(targets, "+")
	outcomes := make([]runner.Outcome, len(records))
	for i, r := range records {
		outcomes[i] = report.Outcome(r)
	}
	end := report.End{Stopped: strings.Join(stopped, "; ")}
	var stale []runner.StaleEntry
	if xfailFile != "" {
		stale = xf.Stale(outcomes)
		end.Stale = report.StaleOf(xfailFile, stale)
	}
	m := report.BuildMatrix(outcomes, nil)
	m.Target = target
	if matrixWanted {
		if err := writeMatrixTo(outs, m, format, out, stdout); err != nil {
			fmt.Fprintf(stderr, "replayspec report: %v\n", err)
			return exitIO
		}
	}
	if hf.html != "" {
		page, err := hf.page(ctx, target, driver.Implementation{}, nil, xfailFile, commandLine("report", args))
		if err != nil {
			return inputError(stderr, "report", err, "Each file is the stdout of 'replayspec run --format json' or 'replayspec merge --format json'.")
		}
		others := map[string]int{}
		if c := hf.opts.Compare; c != nil {
			for i, r := range c.Results {
				others[report.CaseName(r)] = i
			}
		}
		missing := 0
		for i, r := range records {
			file := hf.traceFileOf(r, fromFile[i])
			if file == "" && r.Verdict != string(runner.Skip) {
				missing++
			}
			if c := hf.opts.Compare; c != nil && file != "" {
				if j, ok := others[report.CaseName(r)]; ok {
					// The divergences are found on the two traces held
					// whole (internal/tracediff), within the budget.
					if other := hf.traceFileOf(c.Results[j], hf.compareFrom[j]); other != "" {
						t, err := readTrace(file, defaultTraceMiB<<20)
						u, err2 := readTrace(other, defaultTraceMiB<<20)
						if err == nil && err2 == nil {
							c.Divergences[report.CaseName(r)] = divergences(t, u)
						}
					}
				}
			}
			if file == "" {
				page.Add(r, nil)
			} else if err := page.AddFrom(r, fileEvents(file)); err != nil {
				fmt.Fprintf(stderr, "replayspec report: %s: no timeline: %v\n", report.CaseName(r), err)
			}
		}
		if c := hf.opts.Compare; c != nil && len(c.Divergences) == 0 {
			c.Note = "No pair of traces was at hand, so only verdicts are compared: run both with --trace-out and pass their directories with --traces."
		}
		if missing > 0 {
			fmt.Fprintf(stderr, "replayspec report: %d of %d specs have no trace at hand, so no timeline: run with --trace-out DIR and pass --traces DIR\n", missing, len(records))
		}
		if err := writeHTML(outs, hf.html, page, end); err != nil {
			fmt.Fprintf(stderr, "replayspec report: %v\n", err)
			return exitIO
		}
	}
	for _, s := range stopped {
		fmt.Fprintf(stderr, "replayspec report: a run did not finish: %s\n", s)
	}
	if len(stopped) > 0 || len(stale) > 0 || runner.Unexpected(outcomes) {
		return exitFail
	}
	return exitOK
}

// divergences compares two traces of a spec as diff does.
func divergences(a, b trace.Trace) []report.HTMLDivergence {
	var out []report.HTMLDivergence
	for _, d := range tracediff.Compare(a, b, tracediff.Options{}).Divergences {
		out = append(out, report.HTMLDivergence{Dispatch: d.Dispatch, Step: d.Step, Rules: d.Rules, Before: d.Before, A: d.A, B: d.B})
	}
	return out
}
