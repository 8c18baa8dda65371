package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
)

func init() {
	register(command{name: "merge", summary: "join sharded JSON results into one report and compliance matrix", run: mergeCmd})
}

var mergeHelp = help{
	name:     "merge",
	synopsis: "[--format text|json|junit] [--matrix FILE] [--xfail FILE] RESULTS.json...",
	about: `Joins the JSON results of several runs (each 'replayspec run --format json',
say one per shard of a CI matrix over GPU runners) into one report on stdout
and, with --matrix, one compliance matrix, so that the matrix ends with one
verdict. With --xfail, a listed rule that failed in no shard but held in one
is reported stale. A shard whose stream was cut short (a killed job) fails
the merge: its specs may not all have run.`,
	examples: []string{
		"replayspec run --format json --shard 1/2 specs/ > shard-1.json",
		"replayspec run --format json --shard 2/2 specs/ > shard-2.json",
		"replayspec merge --matrix COMPLIANCE.md shard-*.json",
		"replayspec merge --format junit shard-*.json > report.xml",
	},
}

func mergeCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(mergeHelp.name)
	format := fs.String("format", "text", "report format: text, json or junit")
	matrix := fs.String("matrix", "", "also write the compliance matrix to `FILE` (.json for JSON, else Markdown)")
	xfailFile := fs.String("xfail", "", "the expected-failure list the shards ran with (`FILE`): judges stale entries across all of them")
	quiet := fs.Bool("quiet", false, "leave passing and skipped specs out of the text report")
	files, code, ok := parseFlags(fs, mergeHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if err := checkFormat(*format, formats); err != nil {
		return usageError(stderr, "merge", "--format: %v", err)
	}
	if len(files) == 0 {
		return usageError(stderr, "merge", "no results given: name the JSON streams of 'replayspec run --format json'")
	}
	var inputs []namedPath
	for _, f := range files {
		inputs = append(inputs, namedPath{"results", f})
	}
	var declared []namedPath
	if *matrix != "" {
		declared = append(declared, namedPath{"--matrix", *matrix})
	}
	outs, err := guardOutputs(inputs, declared)
	if err != nil {
		return usageError(stderr, "merge", "%v", err)
	}
	var xf runner.XFail
	if *xfailFile != "" {
		var err error
		if xf, err = loadXFail(ctx, *xfailFile); err != nil {
			return inputError(stderr, "merge", fmt.Errorf("--xfail: %w", err), "")
		}
	}
	shards, code := readShards(ctx, files, stderr)
	if code != exitOK {
		return code
	}
	var records []report.JSONResult
	var targets, stopped []string
	for _, sh := range shards {
		if sh.start.Target != "" && !slices.Contains(targets, sh.start.Target) {
			targets = append(targets, sh.start.Target)
		}
		if sh.end.Stopped != "" {
			stopped = append(stopped, sh.path+": "+sh.end.Stopped)
		} else if sh.start.Cases > 0 && len(sh.recs) != sh.start.Cases {
			stopped = append(stopped, fmt.Sprintf("%s: %d results of the %d its run was to report", sh.path, len(sh.recs), sh.start.Cases))
		}
		records = append(records, sh.recs...)
	}
	if missing := missingShards(shards); missing != "" {
		stopped = append(stopped, missing)
	}
	var outcomes []runner.Outcome
	for _, r := range records {
		outcomes = append(outcomes, report.Outcome(r))
	}
	end := report.End{Stopped: strings.Join(stopped, "; ")}
	var stale []runner.StaleEntry
	if *xfailFile != "" {
		stale = xf.Stale(outcomes)
		end.Stale = report.StaleOf(*xfailFile, stale)
	}
	target := strings.Join(targets, "+")
	opts := report.Options{Target: target, Quiet: *quiet, XFailFile: *xfailFile}
	st, err := report.NewStream(*format, stdout, report.Header{Target: target, XFailFile: *xfailFile}, opts)
	if err != nil {
		return usageError(stderr, "merge", "%v", err)
	}
	for _, r := range records {
		if err := st.Add(r); err != nil {
			fmt.Fprintf(stderr, "replayspec merge: %v\n", stdoutError(err))
			return exitIO
		}
	}
	if err := st.End(end); err != nil {
		fmt.Fprintf(stderr, "replayspec merge: %v\n", stdoutError(err))
		return exitIO
	}
	if *matrix != "" {
		m := report.BuildMatrix(outcomes, nil)
		m.Target = target
		err := outs.write(*matrix, func(w io.Writer) error {
			if strings.HasSuffix(*matrix, ".json") {
				return m.WriteJSON(w)
			}
			return m.WriteMarkdown(w)
		})
		if err != nil {
			fmt.Fprintf(stderr, "replayspec merge: %v\n", err)
			return exitIO
		}
	}
	for _, s := range stopped {
		fmt.Fprintf(stderr, "replayspec merge: not every spec ran: %s\n", report.Name(s))
	}
	if len(stopped) > 0 || len(stale) > 0 || runner.Unexpected(outcomes) {
		return exitFail
	}
	return exitOK
}

// shardResults is one results file given to merge.
type shardResults struct {
	path       string
	start, end report.JSONLine
	recs       []report.JSONResult
	k, n       int // its shard; 1/1 for a whole run
}

// maxElapsedMS bounds a result's elapsed_ms (a year): a stream with more,
// or with less than 0, was not written by replayspec.
const maxElapsedMS = 365 * 24 * 3600 * 1e3

// readShards reads the results files and checks that they are the shards
// of one run, each once: no file given twice, no shard twice, one split
// (every k/n with the same n), no case in two files, and records that a
// run can write. code is exitUsage when they are not.
func readShards(ctx context.Context, files []string, stderr io.Writer) ([]shardResults, int) {
	var shards []shardResults
	seen := map[[32]byte]string{} // content -> file
	owner := map[string]string{}  // case -> file
	byShard := map[int]string{}   // k -> file
	bad := func(hint, format string, a ...any) ([]shardResults, int) {
		return nil, inputError(stderr, "merge", fmt.Errorf(format, a...), hint)
	}
	for _, f := range files {
		data, err := readInput(ctx, f, maxResultsBytes)
		if err != nil {
			return bad("Each file is the stdout of 'replayspec run --format json'.", "%v", err)
		}
		sum := sha256.Sum256(data)
		if prev, ok := seen[sum]; ok {
			return bad("Give each shard's results once.", "%s and %s hold the same results: a file given twice would count its specs twice", prev, f)
		}
		seen[sum] = f
		start, recs, end, err := report.ReadJSON(bytes.NewReader(data))
		if err != nil {
			return bad("Each file is the stdout of 'replayspec run --format json'.", "%s: %v", f, err)
		}
		sh := shardResults{path: f, start: start, end: end, recs: recs, k: 1, n: 1}
		if start.Shard != "" {
			if sh.k, sh.n, err = parseShard(start.Shard); err != nil {
				return bad("Each file is the stdout of 'replayspec run --format json'.", "%s: shard %q: %v", f, start.Shard, err)
			}
		}
		if len(shards) > 0 && shards[0].n != sh.n {
			return bad("Merge the shards of one run: every file the stdout of 'replayspec run --format json --shard k/n' with the same n.",
				"%s is shard %d/%d but %s is shard %d/%d: they split the specs differently", shards[0].path, shards[0].k, shards[0].n, f, sh.k, sh.n)
		}
		if prev, ok := byShard[sh.k]; ok {
			return bad("Give each shard's results once.", "shard %d/%d is given twice: %s and %s", sh.k, sh.n, prev, f)
		}
		byShard[sh.k] = f
		for _, r := range recs {
			if err := checkRecord(r); err != nil {
				return bad("The file was not written by replayspec, or was edited: write it again with 'replayspec run --format json'.", "%s: %s: %v", f, report.Name(r.Name), err)
			}
			key := traceKey(r.Name, r.Run)
			if prev, ok := owner[key]; ok {
				return bad("Merge the shards of one run: each case runs in one shard.", "case %s is in %s and in %s", report.Name(key), prev, f)
			}
			owner[key] = f
		}
		shards = append(shards, sh)
	}
	return shards, exitOK
}

// checkRecord refuses what no run writes: a time below 0, above a year or
// not a number, counts below 0, verdicts and outcomes that do not exist.
func checkRecord(r report.JSONResult) error {
	switch {
	case math.IsNaN(r.ElapsedMS) || r.ElapsedMS < 0 || r.ElapsedMS > maxElapsedMS:
		return fmt.Errorf("elapsed_ms %g is not a run's time (want 0 to %g)", r.ElapsedMS, maxElapsedMS)
	case r.Passes < 0 || r.Events < 0 || r.Run < 0 || r.Attempts < 0:
		return fmt.Errorf("a count below 0 (passes %d, events %d, run %d, attempts %d)", r.Passes, r.Events, r.Run, r.Attempts)
	case !slices.Contains([]runner.Verdict{runner.Pass, runner.Fail, runner.Error, runner.Skip}, runner.Verdict(r.Verdict)):
		return fmt.Errorf("verdict %q (want pass, fail, error or skip)", r.Verdict)
	case !slices.Contains([]runner.Status{runner.Passed, runner.Failed, runner.Skipped, runner.Expected, runner.Errored, runner.Flaky}, runner.Status(r.Outcome)):
		return fmt.Errorf("outcome %q (want passed, failed, expected failure, skipped, error or flaky)", r.Outcome)
	}
	return nil
}

// missingShards names the shards of the split that were not given.
func missingShards(shards []shardResults) string {
	if len(shards) == 0 {
		return ""
	}
	have := map[int]bool{}
	for _, sh := range shards {
		have[sh.k] = true
	}
	n := shards[0].n
	var missing []string
	for k := 1; k <= n; k++ {
		if !have[k] {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d shards given; shard %s missing: give %s results too", n-len(missing), n, strings.Join(missing, ", "), plural(len(missing), "its", "their"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxResultsBytes caps a results file merge reads.
const maxResultsBytes = 1 << 30

// readResults reads one JSON result stream, with a size cap.
func readResults(ctx context.Context, path string) (report.JSONLine, []report.JSONResult, report.JSONLine, error) {
	data, err := readInput(ctx, path, maxResultsBytes)
	if err != nil {
		return report.JSONLine{}, nil, report.JSONLine{}, err
	}
	start, recs, end, err := report.ReadJSON(bytes.NewReader(data))
	if err != nil {
		return start, recs, end, fmt.Errorf("%s: %w", path, err)
	}
	return start, recs, end, nil
}
