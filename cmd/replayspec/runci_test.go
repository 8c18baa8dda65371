package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// The deliberately flaky driver: the reference engine behind the driver
// protocol, with skip_restore planted on a spec's first run when its name
// matches $REPLAYSPEC_FLAKY_ONCE and on every run when it matches
// $REPLAYSPEC_FLAKY_ALWAYS. Runs are counted per spec in files under
// $REPLAYSPEC_FLAKY_DIR, so a spec is flaky the same way whatever worker
// or process runs it.
const flakyDriverEnv = "REPLAYSPEC_FLAKY_DRIVER"

func TestFlakyDriverHelperProcess(t *testing.T) {
	if os.Getenv(flakyDriverEnv) != "1" {
		t.Skip("the flaky driver runs only as a child process")
	}
	err := driver.Serve(context.Background(), os.Stdin, os.Stdout, driver.Implementation{Name: "flaky test driver"}, flakyTarget{}, target.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

type flakyTarget struct{}

func (flakyTarget) Name() string           { return "flaky" }
func (flakyTarget) Capabilities() []string { return simtarget.Sim{}.Capabilities() }

func (flakyTarget) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	f, err := os.OpenFile(filepath.Join(os.Getenv("REPLAYSPEC_FLAKY_DIR"), fileName(s.Name)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return trace.Trace{}, err
	}
	f.Write([]byte{'x'})
	fi, _ := f.Stat()
	f.Close()
	match := func(env string) bool {
		p := os.Getenv(env)
		return p != "" && regexp.MustCompile("^(?:"+p+")$").MatchString(s.Name)
	}
	tg := simtarget.Sim{}
	if match("REPLAYSPEC_FLAKY_ALWAYS") || (fi.Size() == 1 && match("REPLAYSPEC_FLAKY_ONCE")) {
		tg.Faults = replay.Faults{replay.FaultSkipRestore: true}
	}
	return tg.Run(ctx, s, opts)
}

// flakyPort is the flaky driver as an exec: target, counting runs afresh.
func flakyPort(t *testing.T, once, always string) string {
	t.Helper()
	t.Setenv(flakyDriverEnv, "1")
	t.Setenv("REPLAYSPEC_FLAKY_DIR", t.TempDir())
	t.Setenv("REPLAYSPEC_FLAKY_ONCE", once)
	t.Setenv("REPLAYSPEC_FLAKY_ALWAYS", always)
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return fmt.Sprintf("exec:'%s' -test.run=^TestFlakyDriverHelperProcess$", os.Args[0])
}

var ciSpecs = []string{library + "/fixed-three-passes.yaml", library + "/early-exit-stop-after.yaml",
	library + "/indefinite-stop-after.yaml", library + "/restore-non-idempotent-kernels.yaml"}

func TestRunLikeACIRunner(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.csv")

	// A flake is rerun and reported, and does not fail the run; a real
	// failure does. The results file lists both, in the specs' order.
	port := flakyPort(t, "fixed-three-passes", "early-exit-stop-after")
	flakesOut := filepath.Join(dir, "flakes-out.txt")
	code, out, errs := cli(t, append([]string{"run", "-j", "3", "--retries", "2", "--results", first, "--flakes-out", flakesOut, "--target", port, "--gen", "0"}, ciSpecs...)...)
	if code != exitFail || !strings.Contains(errs, "flake: fixed-three-passes (failed, then passed on attempt 2)") {
		t.Errorf("flake and failure: exit %d\n%s%s", code, out, errs)
	}
	csv, _ := os.ReadFile(first)
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	want := []string{"case,status,duration,rules", "fixed-three-passes,flake,", "early-exit-stop-after,fail,", "indefinite-stop-after,pass,", "restore-non-idempotent-kernels,pass,"}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Fatalf("results file line %d: want %q\n%s", i+1, w, csv)
		}
	}
	if !strings.Contains(lines[1], "MEM-2") || !strings.Contains(lines[2], "MEM-2") {
		t.Errorf("the flake and the failure name the rules they broke:\n%s", csv)
	}
	listed, _ := os.ReadFile(flakesOut)
	if fl, err := runner.ParseFlakes(flakesOut, listed); err != nil || len(fl.Patterns) != 1 || fl.Patterns[0].Text != "fixed-three-passes" {
		t.Errorf("--flakes-out: %v\n%s", err, listed)
	}

	// Against that baseline the same failure is expected (not rerun), the
	// flake is a flake again: exit 0.
	port = flakyPort(t, "fixed-three-passes", "early-exit-stop-after")
	code, out, errs = cli(t, append([]string{"run", "--retries", "2", "--baseline", first, "--target", port, "--gen", "0"}, ciSpecs...)...)
	if code != exitOK || !strings.Contains(errs, "0 new failures, 0 fixed, 1 still failing, 1 flakes") {
		t.Errorf("against the baseline: exit %d\n%s%s", code, out, errs)
	}

	// A listed failure that passes now fails the run until the baseline
	// is updated; a new failure fails it too.
	port = flakyPort(t, "", "indefinite-stop-after")
	code, _, errs = cli(t, append([]string{"run", "--baseline", first, "--target", port, "--gen", "0"}, ciSpecs...)...)
	for _, w := range []string{"fixed: early-exit-stop-after (listed as failing", "new failure: indefinite-stop-after", "1 new failures, 1 fixed, 0 still failing"} {
		if !strings.Contains(errs, w) {
			t.Errorf("baseline changes: stderr lacks %q\n%s", w, errs)
		}
	}
	if code != exitFail {
		t.Errorf("a new failure and a fixed case: exit %d, want 1", code)
	}

	// A known-flaky case that fails every time is a flake, listed as
	// such, in JUnit's flakes suite too.
	flakes := tempFile(t, dir, "flakes.txt", "# flaky on this port\nearly-exit-.*\n")
	port = flakyPort(t, "", "early-exit-stop-after")
	code, out, errs = cli(t, append([]string{"run", "--format", "junit", "--retries", "1", "--flakes", flakes, "--target", port, "--gen", "0"}, ciSpecs...)...)
	if code != exitOK || !strings.Contains(errs, `flake: early-exit-stop-after (failed on all 2 attempts, listed in `+flakes+` as "early-exit-.*")`) {
		t.Errorf("known flake: exit %d\n%s", code, errs)
	}
	if !regexp.MustCompile(`<testsuite name="replayspec flakes \(exec:[^"]*\)" tests="1"`).MatchString(out) || !strings.Contains(out, `<flakyFailure message="failed on all 2 attempts; listed in `+flakes+` as known-flaky (early-exit-.*)" type="flake">`) {
		t.Errorf("JUnit has no flakes suite:\n%s", out)
	}
	if !regexp.MustCompile(`<testsuite name="early-exit-stop-after" tests="\d+" failures="0" errors="0"`).MatchString(out) {
		t.Errorf("the known flake counts as a failure in its suite:\n%s", out)
	}
}

// -j changes nothing a reader sees but the time: the text report of the
// library (a spread of it under -short) with one worker and with eight is
// the same, durations aside.
func TestParallelRunReadsTheSame(t *testing.T) {
	durations := regexp.MustCompile(`[0-9.]+ ?(ms|µs|s)\b`)
	lib := libraryUnderShort(t)
	_, one, _ := cli(t, append([]string{"run", "-j", "1"}, lib...)...)
	_, eight, _ := cli(t, append([]string{"run", "-j", "8"}, lib...)...)
	if a, b := durations.ReplaceAllString(one, "T"), durations.ReplaceAllString(eight, "T"); a != b {
		t.Errorf("-j 8 reads otherwise than -j 1:\n%s\n---\n%s", a, b)
	}
	if code, _, errs := cli(t, "run", "-j", "-1", library); code != exitUsage || !strings.Contains(errs, "-j and --retries") {
		t.Errorf("-j -1: exit %d, %q", code, errs)
	}
	if code, _, errs := cli(t, "run", "--baseline", "/no/such/file.csv", library); code != exitUsage || !strings.Contains(errs, "--baseline") {
		t.Errorf("missing baseline: exit %d, %q", code, errs)
	}
}
