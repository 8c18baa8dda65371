package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/replayspec/replayspec/internal/exectarget"
	"github.com/replayspec/replayspec/internal/replay"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

func init() {
	register(command{name: "run", summary: "run specs on a target and check every rule", run: runCmd})
}

var runHelp = help{
	name:     "run",
	synopsis: "[options] SPEC|DIR...",
	about: `Runs each spec (a YAML file, or every *.yaml file of a directory) on a target,
checks the trace against every rule oracle and the spec's own expectations, and
writes a report to stdout. A directory's sub-directories are not read.

--trace-out FILE writes the NDJSON trace: with one spec to FILE (or into FILE/
when FILE is a directory), with several specs one FILE/NAME.ndjson per spec, FILE
being created as a directory. A failing run still writes its whole trace.
--timeline FILE writes a Chrome trace-event JSON of every spec; open it in
https://ui.perfetto.dev or chrome://tracing.`,
	examples: []string{
		"replayspec run specs/",
		"replayspec run --trace-out out/fixed.ndjson --timeline out/fixed.json specs/fixed-three-passes.yaml",
		"replayspec run --format junit --shard 2/4 specs/ > report.xml",
		"replayspec run --fault completion_every_pass specs/fixed-three-passes.yaml   # watch the oracles catch it",
	},
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(runHelp.name)
	targetName := fs.String("target", "sim", "where to run: sim (the reference engine on the simulator), cuda, rocr, or exec:COMMAND (an external port)")
	format := fs.String("format", "text", "report format: text, json or junit")
	traceOut := fs.String("trace-out", "", "write the NDJSON trace to `FILE` (one spec) or into directory FILE (several specs)")
	timeline := fs.String("timeline", "", "write a Chrome trace-event `FILE` (opens in Perfetto)")
	shard := fs.String("shard", "", "run only shard `k/n` of the specs (1 <= k <= n), for a CI matrix")
	maxPasses := fs.Uint64("max-passes", 0, "pass budget per dispatch for indefinite loops, for every spec (`N`; 0 keeps each spec's limits.max_passes)")
	timeout := fs.Duration("timeout", 60*time.Second, "give up on a spec after this `duration`")
	faults := fs.String("fault", "", "plant known engine bugs, comma-separated `NAME,...` (sim only; see docs/faults.md)")
	quiet := fs.Bool("quiet", false, "leave passing and skipped specs out of the text report")
	xfailFile := fs.String("xfail", "", "a port's expected failures: `FILE` of rule IDs or spec names, each with a reason (docs/driver-protocol.md); a listed one that passes is an error")
	matrixFile := fs.String("matrix", "", "also write the compliance matrix (rule x status) to `FILE` (.json for JSON, else Markdown)")
	ci := addCIFlags(fs) // -j, --retries, --flakes, --baseline, --results (runci.go)
	paths, code, ok := parseFlags(fs, runHelp, args, stdout, stderr)
	if !ok {
		return code
	}

	if err := checkFormat(*format, formats); err != nil {
		return usageError(stderr, "run", "--format: %v", err)
	}
	if len(paths) == 0 {
		return usageError(stderr, "run", "no spec given: name spec files or directories, e.g. replayspec run specs/")
	}
	var k, n int
	if *shard != "" {
		var err error
		if k, n, err = parseShard(*shard); err != nil {
			return usageError(stderr, "run", "--shard %q: %v", *shard, err)
		}
	}
	if *timeout <= 0 {
		return usageError(stderr, "run", "--timeout %s: want a positive duration such as 30s or 2m", *timeout)
	}
	var xf runner.XFail
	if *xfailFile != "" {
		var err error
		if xf, err = runner.LoadXFail(*xfailFile); err != nil {
			return inputError(stderr, "run", fmt.Errorf("--xfail: %w", err), "")
		}
	}
	if err := ci.load(); err != nil {
		return inputError(stderr, "run", err, "")
	}
	fset, err := replay.ParseFaults(*faults)
	if err != nil {
		return usageError(stderr, "run", "--fault: %v", err)
	}
	tg, err := openTarget(*targetName, fset)
	if err != nil {
		var un *target.Unavailable
		if errors.As(err, &un) {
			fmt.Fprintf(stderr, "replayspec run: target %s is not available on this machine: %s\n", *targetName, un.Reason)
			fmt.Fprintln(stderr, "Run on the simulator (--target sim, the default) or on a machine that has it.")
			return exitUsage
		}
		return usageError(stderr, "run", "--target: %v", err)
	}

	specs, err := runner.Collect(paths)
	if err != nil {
		return inputError(stderr, "run", err, "Fix the spec (docs/spec-format.md lists every key), or check one file with 'replayspec validate FILE'.")
	}
	if *shard != "" {
		specs, _ = runner.Shard(specs, k, n) // k/n checked above
		if len(specs) == 0 {
			fmt.Fprintf(stderr, "replayspec run: shard %d/%d has no specs\n", k, n)
		}
	}
	if *maxPasses > 0 {
		for i := range specs {
			specs[i].Limits.MaxPasses = *maxPasses
		}
	}

	opts := runner.Options{Target: tg, Timeout: *timeout}
	var progress func(done, total int, r runner.Result)
	if len(specs) > 1 && isTerminal(stderr) {
		progress = func(done, total int, r runner.Result) {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s %s", done, total, r.Spec.Name, r.Verdict())
			if done == total {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
	}
	results, flakes, err := ci.run(specs, opts, progress)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec run: %v\n", err)
		return exitUsage
	}

	ropts := report.Options{Target: tg.Name(), Quiet: *quiet, Rerun: func(s spec.Spec) string {
		cmd := "replayspec run"
		if *targetName != "sim" {
			cmd += " --target " + *targetName
		}
		if *faults != "" {
			cmd += " --fault " + *faults
		}
		return cmd + " --trace-out " + fileName(s.Name) + ".ndjson --timeline " + fileName(s.Name) + ".json " + s.File
	}, Flakes: flakes}
	code = ci.exit(stderr, exitFor(results), results, flakes)
	if *xfailFile != "" || *matrixFile != "" {
		outcomes := xf.Apply(results)
		if *xfailFile != "" {
			code = exitOK
			if runner.Unexpected(outcomes) {
				code = exitFail
			}
			reportOutcomes(stderr, outcomes)
		}
		if *matrixFile != "" {
			if err := writeMatrix(*matrixFile, tg, outcomes); err != nil {
				fmt.Fprintf(stderr, "replayspec run: --matrix: %v\n", err)
				code = exitUsage
			}
		}
	}
	if *traceOut != "" {
		files, err := writeTraces(*traceOut, results)
		ropts.TraceFiles = files
		if err != nil {
			fmt.Fprintf(stderr, "replayspec run: --trace-out: %v\n", err)
			code = exitUsage
		}
	}
	if *timeline != "" {
		if err := writeFile(*timeline, func(w io.Writer) error { return report.Timeline(w, results, ropts) }); err != nil {
			fmt.Fprintf(stderr, "replayspec run: --timeline: %v\n", err)
			code = exitUsage
		}
	}
	if err := writeReport(stdout, *format, results, ropts); err != nil {
		fmt.Fprintf(stderr, "replayspec run: writing the report: %v\n", err)
		return exitUsage
	}
	for _, r := range results {
		var un *target.Unavailable
		if errors.As(r.Err, &un) {
			fmt.Fprintf(stderr, "replayspec run: target %s is not available on this machine: %s\n", tg.Name(), un.Reason)
			return exitUsage
		}
	}
	return code
}

// parseShard reads "k/n".
func parseShard(s string) (k, n int, err error) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, fmt.Errorf("want k/n, e.g. 1/4")
	}
	k, errK := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	if errK != nil || errN != nil {
		return 0, 0, fmt.Errorf("want two whole numbers k/n, e.g. 1/4")
	}
	if n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("want 1 <= k <= n, e.g. 1/4")
	}
	return k, n, nil
}

// writeTraces writes each result's trace: to path itself for one spec
// (unless path is a directory), else into directory path as NAME.ndjson.
// It returns the file of each spec name.
func writeTraces(path string, results []runner.Result) (map[string]string, error) {
	files := map[string]string{}
	fi, statErr := os.Stat(path)
	isDir := statErr == nil && fi.IsDir()
	if len(results) == 1 && !isDir {
		if err := writeTrace(path, results[0].Trace); err != nil {
			return files, err
		}
		files[results[0].Spec.Name] = path
		return files, nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return files, fmt.Errorf("%w (with several specs FILE is a directory: one NAME.ndjson per spec)", err)
	}
	used := map[string]int{}
	var errs []error
	for _, r := range results {
		if r.Verdict() == runner.Skip {
			continue
		}
		base := fileName(r.Spec.Name)
		if used[base]++; used[base] > 1 {
			base += "." + strconv.Itoa(used[base])
		}
		f := filepath.Join(path, base+".ndjson")
		if err := writeTrace(f, r.Trace); err != nil {
			errs = append(errs, err)
			continue
		}
		files[r.Spec.Name] = f
	}
	return files, errors.Join(errs...)
}

func writeTrace(path string, t trace.Trace) error {
	return writeFile(path, func(w io.Writer) error { return trace.Write(w, t) })
}

// writeFile writes a file through fn, creating its directory.
func writeFile(path string, fn func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// reportOutcomes tells what the expected-failure list made of the run.
func reportOutcomes(w io.Writer, outcomes []runner.Outcome) {
	for _, o := range outcomes {
		switch o.Status {
		case runner.Expected:
			fmt.Fprintf(w, "expected failure: %s: %s\n", o.Result.Spec.Name, o.Reason)
		case runner.Errored, runner.Failed:
			if len(o.Listed) > 0 {
				fmt.Fprintf(w, "%s: %s: %s\n", o.Status, o.Result.Spec.Name, o.Reason)
			}
		}
	}
}

// writeMatrix writes the compliance matrix of a run, as JSON when the file
// name ends in .json, else as Markdown.
func writeMatrix(path string, tg target.Target, outcomes []runner.Outcome) error {
	var families []string
	if e, ok := tg.(*exectarget.Exec); ok {
		families = e.Families()
	}
	m := report.BuildMatrix(outcomes, families)
	m.Target = tg.Name()
	return writeFile(path, func(w io.Writer) error {
		if strings.HasSuffix(path, ".json") {
			return m.WriteJSON(w)
		}
		return m.WriteMarkdown(w)
	})
}
