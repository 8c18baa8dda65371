package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
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

func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
		if xf, err = loadXFail(*xfailFile); err != nil {
			return inputError(stderr, "merge", fmt.Errorf("--xfail: %w", err), "")
		}
	}
	var records []report.JSONResult
	var targets, stopped []string
	for _, f := range files {
		start, recs, end, err := readResults(f)
		if err != nil {
			return inputError(stderr, "merge", err, "Each file is the stdout of 'replayspec run --format json'.")
		}
		if start.Target != "" && !slices.Contains(targets, start.Target) {
			targets = append(targets, start.Target)
		}
		if end.Stopped != "" {
			stopped = append(stopped, f+": "+end.Stopped)
		}
		records = append(records, recs...)
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
		fmt.Fprintf(stderr, "replayspec merge: a shard did not finish: %s\n", report.Name(s))
	}
	if len(stopped) > 0 || len(stale) > 0 || runner.Unexpected(outcomes) {
		return exitFail
	}
	return exitOK
}

// readResults reads one JSON result stream, with a size cap.
func readResults(path string) (report.JSONLine, []report.JSONResult, report.JSONLine, error) {
	data, err := spec.ReadFile(path, 1<<30)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return report.JSONLine{}, nil, report.JSONLine{}, fmt.Errorf("%s: %w", path, err)
	}
	start, recs, end, err := report.ReadJSON(strings.NewReader(string(data)))
	if err != nil {
		return start, recs, end, fmt.Errorf("%s: %w", path, err)
	}
	return start, recs, end, nil
}
