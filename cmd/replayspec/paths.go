package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/trace"
)

// namedPath is a file the command reads or writes, with the option (or
// argument) that names it, for messages.
type namedPath struct{ flag, path string }

// outputPlan is every file a run will write, known before it starts.
type outputPlan struct {
	traces   map[string]string // key (spec name, or name#run) to trace file
	timeline string
	matrix   string
	goldens  map[string]string // spec name to golden file
	update   bool
	outs     *outputSet // the guard every file is written through
}

// planOutputs decides where each spec's trace goes: with one spec and
// --trace-out not an existing directory, to that file; else into the
// directory, one NAME.ndjson per spec (NAME.2.ndjson for a second spec of
// the same name, NAME.run2.ndjson for -count).
func planOutputs(f runFlags, specs []spec.Spec) outputPlan {
	p := outputPlan{traces: map[string]string{}, timeline: f.timeline, matrix: f.matrix, update: f.update}
	if f.traceOut != "" {
		fi, err := os.Stat(f.traceOut)
		isDir := err == nil && fi.IsDir()
		if len(specs) == 1 && f.count == 1 && !isDir {
			p.traces[specs[0].Name] = f.traceOut
		} else {
			used := map[string]int{}
			for _, s := range specs {
				base := fileName(s.Name)
				if used[base]++; used[base] > 1 {
					base += "." + strconv.Itoa(used[base])
				}
				if f.count == 1 {
					p.traces[s.Name] = filepath.Join(f.traceOut, base+".ndjson")
					continue
				}
				for run := 1; run <= f.count; run++ {
					p.traces[traceKey(s.Name, run)] = filepath.Join(f.traceOut, fmt.Sprintf("%s.run%d.ndjson", base, run))
				}
			}
		}
	}
	if f.golden != "" {
		p.goldens = map[string]string{}
		for _, s := range specs {
			p.goldens[s.Name] = filepath.Join(f.golden, fileName(s.Name)+".ndjson")
		}
	}
	return p
}

// all lists the files the plan writes (goldens only with --update).
func (p outputPlan) all() []namedPath {
	var out []namedPath
	keys := make([]string, 0, len(p.traces))
	for k := range p.traces {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, namedPath{"--trace-out", p.traces[k]})
		if !special(p.traces[k]) { // /dev/stdout gets the trace, and no partial file beside it
			out = append(out, namedPath{"--trace-out (while its spec runs)", partialFile(p.traces[k])})
		}
	}
	if p.timeline != "" {
		out = append(out, namedPath{"--timeline", p.timeline})
	}
	if p.matrix != "" {
		out = append(out, namedPath{"--matrix", p.matrix})
	}
	for _, name := range sortedKeys(p.goldens) {
		if p.update {
			out = append(out, namedPath{"--golden --update", p.goldens[name]})
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// specInputs are the spec files a run reads.
func specInputs(ss []spec.Spec) []namedPath {
	var out []namedPath
	for _, s := range ss {
		if s.File != "" {
			out = append(out, namedPath{"spec", s.File})
		}
	}
	return out
}

// checkPaths refuses outputs that would overwrite an input or another
// output: every output is compared with every input and with the outputs
// before it, by absolute path and, for files that exist, by identity (a
// link, a second path to the same file). It takes time in proportion to
// the number of paths (gen writes thousands).
func checkPaths(inputs, outputs []namedPath) error {
	type known struct {
		namedPath
		abs  string
		info os.FileInfo
	}
	mk := func(p namedPath) known {
		k := known{namedPath: p, abs: absPath(p.path)}
		if fi, err := os.Stat(p.path); err == nil && !fi.IsDir() {
			k.info = fi
		}
		return k
	}
	// seen finds an earlier path to the same file: by absolute path, or
	// by the file's identity where the system gives one (else, rarely
	// needed, by comparing with every earlier file that exists).
	type index struct {
		byAbs  map[string]known
		byID   map[any]known
		others []known
	}
	newIndex := func() *index { return &index{byAbs: map[string]known{}, byID: map[any]known{}} }
	add := func(ix *index, k known) {
		if _, dup := ix.byAbs[k.abs]; !dup {
			ix.byAbs[k.abs] = k
		}
		if k.info != nil {
			if id, ok := fileID(k.info); ok {
				if _, dup := ix.byID[id]; !dup {
					ix.byID[id] = k
				}
			} else {
				ix.others = append(ix.others, k)
			}
		}
	}
	find := func(ix *index, k known) (known, bool) {
		if prev, ok := ix.byAbs[k.abs]; ok {
			return prev, true
		}
		if k.info == nil {
			return known{}, false
		}
		if id, ok := fileID(k.info); ok {
			prev, found := ix.byID[id]
			return prev, found
		}
		for _, prev := range ix.others {
			if os.SameFile(prev.info, k.info) {
				return prev, true
			}
		}
		return known{}, false
	}
	ins, outs := newIndex(), newIndex()
	for _, p := range inputs {
		add(ins, mk(p))
	}
	var errs []string
	for _, p := range outputs {
		if fi, err := os.Stat(p.path); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Sprintf("%s %s is a directory: name a file", p.flag, p.path))
			continue
		}
		o := mk(p)
		if in, ok := find(ins, o); ok {
			errs = append(errs, fmt.Sprintf("%s %s would overwrite the %s %s: write it elsewhere", p.flag, p.path, in.flag, in.path))
		}
		if prev, ok := find(outs, o); ok {
			errs = append(errs, fmt.Sprintf("%s %s and %s %s are the same file: give each its own", prev.flag, prev.path, p.flag, p.path))
		}
		add(outs, o)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// golden compares r's trace with its golden file, or writes it (update).
// A difference, or a missing golden, fails the spec; an error is a file
// that could not be written.
func (p outputPlan) golden(r *runner.Result, update bool) error {
	var got bytes.Buffer
	if err := trace.Write(&got, r.Trace); err != nil {
		return err
	}
	return p.goldenOf(r, &got, update)
}

// goldenLost is the error of r's golden when r's spec was judged as it ran
// and its events could not be copied aside for the comparison (err says
// why): neither compared nor written.
func (p outputPlan) goldenLost(r runner.Result, update bool, err error) error {
	file, ok := p.goldens[r.Spec.Name]
	if !ok || r.Verdict() == runner.Skip {
		return nil
	}
	left := "the temporary copy of the spec's events failed, so the golden was not compared"
	if update {
		left = "the temporary copy of the spec's events failed, so the golden was not written"
	}
	return &outputError{Flag: "--golden", Path: file, Err: err, Left: left}
}

// goldenOf is golden with the trace's NDJSON text read from got: the file
// a spec judged as it ran wrote as its events came (partials), or the held
// trace written out. Neither is held whole: the golden and got are
// compared a line at a time.
func (p outputPlan) goldenOf(r *runner.Result, got io.Reader, update bool) error {
	file, ok := p.goldens[r.Spec.Name]
	if !ok || r.Verdict() == runner.Skip {
		return nil
	}
	if update {
		return p.outs.write(file, func(w io.Writer) error { _, err := io.Copy(w, got); return err })
	}
	want, err := os.Open(file)
	msg := ""
	switch {
	case errors.Is(err, os.ErrNotExist):
		msg = fmt.Sprintf("no golden trace %s: write it with --golden %s --update, review it, commit it", file, filepath.Dir(file))
	case err != nil:
		msg = fmt.Sprintf("cannot read the golden trace: %v", err)
	default:
		defer want.Close()
		diff, err := firstDifference(want, got)
		switch {
		case err != nil:
			msg = fmt.Sprintf("cannot read the golden trace: %v", err)
		case diff != "":
			msg = fmt.Sprintf("the trace differs from the golden %s %s; if the change is meant, run with --update and review the diff", file, diff)
		}
	}
	if msg != "" {
		r.Violations = append(r.Violations, check.Violation{Rule: "GOLDEN", Requires: "the trace is byte for byte the reviewed golden trace", Message: msg})
	}
	return nil
}

// firstDifference says where two texts first differ, by line, reading
// each a line at a time; "" when they are the same.
func firstDifference(want, got io.Reader) (string, error) {
	wr, gr := bufio.NewReaderSize(want, 1<<16), bufio.NewReaderSize(got, 1<<16)
	for line := 1; ; line++ {
		w, werr := wr.ReadString('\n')
		g, gerr := gr.ReadString('\n')
		for _, err := range []error{werr, gerr} {
			if err != nil && !errors.Is(err, io.EOF) {
				return "", err
			}
		}
		if w != g {
			return fmt.Sprintf("at line %d:\n  golden: %s\n  now:    %s", line, cut(strings.TrimSuffix(w, "\n")), cut(strings.TrimSuffix(g, "\n"))), nil
		}
		if werr != nil { // both ended here, the same
			return "", nil
		}
	}
}

func cut(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// loadSpecs loads the specs paths name, each file read with a size cap;
// with no paths, the built-in library.
func loadSpecs(ctx context.Context, paths []string, limit int64) ([]spec.Spec, error) {
	out, _, err := loadSpecsTimed(ctx, paths, limit)
	return out, err
}

// loadSpecsTimed is loadSpecs that also says how long each file took to
// read and check: that time counts against the spec's --timeout.
func loadSpecsTimed(ctx context.Context, paths []string, limit int64) ([]spec.Spec, map[string]time.Duration, error) {
	took := map[string]time.Duration{}
	if len(paths) == 0 {
		lib, err := specs.Library()
		return lib, took, err
	}
	files, err := runner.SpecFiles(paths)
	if err != nil {
		return nil, took, err
	}
	named := map[string]bool{}
	for _, p := range paths {
		named[p] = true
	}
	var out []spec.Spec
	var errs []error
	for _, f := range files {
		if !named[f] {
			if err := regularInDir(f); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		start := time.Now()
		cases, err := readCases(ctx, f, limit)
		took[f] += time.Since(start)
		if errors.Is(err, errReadInterrupted) {
			return out, took, err
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, cases...)
	}
	return out, took, errors.Join(errs...)
}

// readCases reads and parses one spec file, at most limit bytes of it: a
// spec, or the cases of a spec with a matrix.
func readCases(ctx context.Context, path string, limit int64) ([]spec.Spec, error) {
	data, err := readInput(ctx, path, limit)
	if err != nil {
		return nil, err
	}
	return parseCases(path, data)
}

// parseCases is spec.ParseCases. The tests put a memo in its place
// (TestMain): they run the CLI in one process over the same files again
// and again, and parsing them again was a fifth of their CPU under -race.
var parseCases = spec.ParseCases

// maxListBytes caps the lists a run reads (--xfail, --flakes, --baseline).
const maxListBytes = 1 << 20

// loadXFail reads an expected-failure list with a size cap.
func loadXFail(ctx context.Context, path string) (runner.XFail, error) {
	data, err := readInput(ctx, path, maxListBytes)
	if err != nil {
		return runner.XFail{}, err
	}
	return runner.ParseXFail(path, data)
}

// lastFailedFile keeps, per working directory, the specs that failed in
// the last run there (pytest's --lf). REPLAYSPEC_CACHE overrides where.
func lastFailedFile(e env) (string, error) {
	dir := e.getenv("REPLAYSPEC_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "replayspec")
	}
	return filepath.Join(dir, "last-failed.json"), nil
}

func readLastFailed(e env) map[string][]string {
	m := map[string][]string{}
	if file, err := lastFailedFile(e); err == nil {
		if data, err := os.ReadFile(file); err == nil {
			_ = json.Unmarshal(data, &m)
		}
	}
	return m
}

// lastFailed lists the specs that failed last time here; found is false
// when no run was recorded here.
func lastFailed(e env) (names []string, found bool) {
	names, found = readLastFailed(e)[e.dir]
	return names, found
}

// saveLastFailed records the failing and erring specs of this run. A
// cache that cannot be written costs only --last-failed.
func saveLastFailed(e env, outcomes []runner.Outcome) {
	file, err := lastFailedFile(e)
	if err != nil {
		return
	}
	m := readLastFailed(e)
	failed := []string{}
	for _, o := range outcomes {
		if (o.Status == runner.Failed || o.Status == runner.Errored) && !slices.Contains(failed, o.Result.Spec.Name) {
			failed = append(failed, o.Result.Spec.Name)
		}
	}
	m[e.dir] = failed
	data, _ := json.MarshalIndent(m, "", "  ")
	_ = writeCache(file, data)
}
