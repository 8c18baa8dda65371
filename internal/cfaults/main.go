// Command cfaults measures how well the suite names a port's bugs: the C
// port's fault matrix. It builds the unmodified driver and one driver per
// fault (every KRS_FAULT_* switch of sdk/faults.h, every patch of
// ports/c/faults), runs the spec library through each at the full, runtime
// and black-box profiles, and reports, per fault and profile, the rules
// named beyond what the unmodified driver reports with the same flags
// (spec by spec, rule by rule). Run it from the repository root; faults.sh
// does:
//
//	go run ./internal/cfaults [-enforce full,runtime,black-box] [-strict] [-docs docs/faults.md]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	portDir     = "ports/c"
	faultsDir   = "ports/c/faults"
	reasonsFile = "ports/c/faults/unnamed.txt"
	docBegin    = "<!-- c-port fault matrix: ports/c/faults.sh -docs docs/faults.md -->"
	docEnd      = "<!-- end of c-port fault matrix -->"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "faults matrix:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		replayspec   = flag.String("replayspec", "bin/replayspec", "the replayspec CLI")
		specs        = flag.String("specs", "specs/", "the specs to run, comma-separated files or directories")
		profiles     = flag.String("profiles", strings.Join(allProfiles, ","), "the profiles to run, comma-separated")
		jobs         = flag.Int("j", runtime.NumCPU(), "builds and library runs at once")
		only         = flag.String("run", "", "only the faults whose name matches this regular expression")
		baselineRuns = flag.Int("baselines", 2, "runs of the unmodified driver per profile; their union is the baseline")
		timeout      = flag.Duration("timeout", 8*time.Second, "give up on a spec after this long (a fault may hang one)")
		maxPasses    = flag.Int("max-passes", 100, "the pass budget of every spec: a fault that loops for ever ends")
		aimList      = flag.String("aim", "full=95,runtime=90,black-box=85", "the share of faults to name under a rule they break, per profile (percent)")
		enforce      = flag.String("enforce", "", "profiles whose aim must be met, comma-separated: below it the command fails")
		strict       = flag.Bool("strict", false, "fail when a fault is not named under every rule it breaks at a profile and "+reasonsFile+" gives no reason, or gives one for a fault that is")
		docs         = flag.String("docs", "", "rewrite the matrix section of this Markdown file (between its markers)")
		reuse        = flag.Bool("reuse", false, "build and run nothing: judge the reports the last run left in "+filepath.Join(portDir, "bin", "matrix", "reports"))
	)
	flag.Parse()
	if _, err := os.Stat(filepath.Join(portDir, "sdk", "faults.h")); err != nil {
		return fmt.Errorf("run from the repository root (%s/sdk/faults.h: %v)", portDir, err)
	}
	profs := strings.Split(*profiles, ",")
	for _, p := range profs {
		if !slices.Contains(allProfiles, p) {
			return fmt.Errorf("-profiles: %q is not a profile (%s)", p, strings.Join(allProfiles, ", "))
		}
	}
	aims, err := parseAims(*aimList)
	if err != nil {
		return err
	}
	var mustMeet []string
	if *enforce != "" {
		mustMeet = strings.Split(*enforce, ",")
		for _, p := range mustMeet {
			if _, ok := aims[p]; !ok {
				return fmt.Errorf("-enforce: %q has no aim in -aim %s", p, *aimList)
			}
		}
	}
	faults, err := catalog(*only)
	if err != nil {
		return err
	}
	reasons, err := readReasons(reasonsFile, allProfiles)
	if err != nil {
		return err
	}
	fl, err := readFlags(portDir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "c-port-faults-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b := &builder{fl: fl, portDir: portDir, binDir: filepath.Join(portDir, "bin", "faults"),
		objDir: filepath.Join(portDir, "bin", "matrix", "obj"), tmpDir: tmp, jobs: *jobs}

	start := time.Now()
	if !*reuse {
		if err := b.base(); err != nil {
			return err
		}
		if err := first(parallel(*jobs, len(faults), func(i int) error { return b.build(faults[i]) })); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "faults matrix: built the baseline and %d fault drivers in %s\n", len(faults), time.Since(start).Round(time.Second))
	}

	reports := filepath.Join(portDir, "bin", "matrix", "reports")
	if err := os.MkdirAll(reports, 0o755); err != nil {
		return err
	}
	r := &runner{replayspec: *replayspec, specs: strings.Split(*specs, ","), timeout: *timeout, maxPasses: *maxPasses, reports: reports}
	type job struct {
		name, driver, profile string
		tag                   int
	}
	var todo []job
	for _, p := range profs {
		for i := range *baselineRuns {
			todo = append(todo, job{baselineName, b.driver(baselineName), p, i})
		}
		for _, f := range faults {
			todo = append(todo, job{f.Name, b.driver(f.Name), p, 0})
		}
	}
	start = time.Now()
	var mu sync.Mutex
	done := 0
	outs := make([]outcome, len(todo))
	errs := parallel(*jobs, len(todo), func(i int) error {
		var o outcome
		var err error
		if *reuse {
			o, err = r.read(todo[i].name, todo[i].profile, todo[i].tag)
		} else {
			o, err = r.run(todo[i].driver, todo[i].name, todo[i].profile, todo[i].tag)
		}
		outs[i] = o
		mu.Lock()
		done++
		if done%20 == 0 || done == len(todo) {
			fmt.Fprintf(os.Stderr, "faults matrix: %d of %d library runs (%s)\n", done, len(todo), time.Since(start).Round(time.Second))
		}
		mu.Unlock()
		return err
	})
	if err := first(errs); err != nil {
		return err
	}
	base := map[string][]outcome{}
	runs := map[string]map[string]outcome{}
	for i, j := range todo {
		if j.name == baselineName {
			base[j.profile] = append(base[j.profile], outs[i])
			continue
		}
		if runs[j.profile] == nil {
			runs[j.profile] = map[string]outcome{}
		}
		runs[j.profile][j.name] = outs[i]
	}
	cells := map[string]map[string]cell{}
	baselines := map[string]outcome{}
	for _, p := range profs {
		baselines[p] = merge(base[p]...)
		cells[p] = map[string]cell{}
		for _, f := range faults {
			cells[p][f.Name] = score(f, runs[p][f.Name], baselines[p])
		}
	}

	writeText(os.Stdout, faults, profs, cells)
	writeSummary(os.Stdout, faults, profs, cells, aims)
	fmt.Printf("\n(%s; the baseline: %d runs of the unmodified driver per profile, same flags)\n",
		commandLine(*specs, *maxPasses, *timeout), *baselineRuns)
	fmt.Printf("The baseline reported (subtracted from every fault's run):\n")
	for _, line := range baselineText(profs, baselines) {
		fmt.Printf("  %s\n", line)
	}

	if *docs != "" {
		var md bytes.Buffer
		writeMarkdown(&md, faults, profs, cells, aims, reasons, baselines)
		text, err := os.ReadFile(*docs)
		if err != nil {
			return err
		}
		doc, err := replaceSection(string(text), docBegin, docEnd, md.String())
		if err != nil {
			return fmt.Errorf("%s: %v", *docs, err)
		}
		if err := os.WriteFile(*docs, []byte(doc), 0o644); err != nil {
			return err
		}
	}

	var failures []string
	for _, p := range mustMeet {
		if _, ran := cells[p]; !ran {
			return fmt.Errorf("-enforce %s: that profile was not run (-profiles %s)", p, *profiles)
		}
		if t := count(faults, cells[p], ""); t.percent() < aims[p] {
			failures = append(failures, fmt.Sprintf("%s: %d of %d faults (%.1f%%) named under a rule they break; the aim is %.0f%%", p, t.Named, t.Faults, t.percent(), aims[p]))
		}
	}
	if *strict {
		if *only != "" {
			return fmt.Errorf("-strict judges the whole matrix: leave -run out")
		}
		failures = append(failures, audit(faults, cells, reasons, reasonsFile)...)
	}
	if len(failures) > 0 {
		return fmt.Errorf("\n  %s", strings.Join(failures, "\n  "))
	}
	return nil
}

// catalog lists the switches, then the patches, those whose name matches
// only ("" for all).
func catalog(only string) ([]Fault, error) {
	switches, err := readSwitches(portDir)
	if err != nil {
		return nil, err
	}
	patches, err := readPatches(faultsDir)
	if err != nil {
		return nil, err
	}
	all := append(switches, patches...)
	if only == "" {
		return all, nil
	}
	re, err := regexp.Compile(only)
	if err != nil {
		return nil, fmt.Errorf("-run: %v", err)
	}
	var out []Fault
	for _, f := range all {
		if re.MatchString(f.Name) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-run %q matches no fault", only)
	}
	return out, nil
}

// parseAims reads "full=95,runtime=90".
func parseAims(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		p, v, ok := strings.Cut(part, "=")
		n, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || n < 0 || n > 100 || !slices.Contains(allProfiles, p) {
			return nil, fmt.Errorf("-aim: %q is not PROFILE=PERCENT (profiles: %s)", part, strings.Join(allProfiles, ", "))
		}
		out[p] = n
	}
	return out, nil
}

// commandLine says how each driver was run.
func commandLine(specs string, maxPasses int, timeout time.Duration) string {
	return fmt.Sprintf("each driver: replayspec run --format json -j 1 --timeout %s --max-passes %d --target \"exec:DRIVER --profile PROFILE\" %s",
		timeout, maxPasses, strings.ReplaceAll(specs, ",", " "))
}
