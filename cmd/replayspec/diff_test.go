package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/target/cuda"
)

func TestDiffUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--target", "sim", library + "/fixed-three-passes.yaml"}, "want --target twice"},
		{[]string{"diff", "--target", "sim", "--target", "sim"}, "no spec given"},
		{[]string{"diff", "--target", "sim", "--target", "nowhere", library}, "unknown target"},
		{[]string{"diff", "--target", "sim", "--target", "sim", "--format", "junit", library}, "--format"},
	} {
		code, _, errs := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// The reference engine against itself agrees on the library (a spread of
// it under -short); against a port with a planted bug (the reference
// driver with skip_restore) it differs where the restore is missing, names
// the rules, and exits 1.
func TestDiffFindsWhatDiffers(t *testing.T) {
	spec := library + "/fixed-three-passes.yaml"
	code, out, errs := cli(t, append([]string{"diff", "--target", "sim", "--target", "sim"}, libraryUnderShort(t)...)...)
	if code != exitOK || !strings.Contains(out, " same, 0 differ, 0 skipped, 0 errors (sim vs sim)") {
		t.Errorf("sim vs sim: exit %d\n%s%s", code, out, errs)
	}
	port := "exec:" + driverCommand(t, "driver", "--fault", "skip_restore")
	dir := t.TempDir()
	code, out, errs = cli(t, "diff", "--target", "sim", "--target", port, "--trace-out", dir, spec)
	for _, want := range []string{"DIFFERS  fixed-three-passes", "inc, step 19: touches MEM-2", "restore thread=1 dispatch=d1 pass=1", "verdict MEM-2: pass on sim, fail on exec:"} {
		if !strings.Contains(out, want) {
			t.Errorf("sim vs a port without restores: output lacks %q:\n%s%s", want, out, errs)
		}
	}
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	for _, side := range []string{"sim", fileName(port)} {
		if _, err := os.Stat(filepath.Join(dir, side, "fixed-three-passes.ndjson")); err != nil {
			t.Errorf("--trace-out: %v", err)
		}
	}
	jsonFile := filepath.Join(dir, "diff.json")
	cli(t, "diff", "--json", jsonFile, "--target", "sim", "--target", port, spec)
	if b, err := os.ReadFile(jsonFile); err != nil || !strings.Contains(string(b), `"status": "differs"`) {
		t.Errorf("--json: %v\n%s", err, b)
	}
	code, out, _ = cli(t, "diff", "--format", "json", "--target", "sim", "--target", port, spec)
	var rep struct {
		Targets []string
		Specs   []struct {
			Spec, Status string
			Divergences  []struct {
				Dispatch string
				Rules    []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitFail {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	if len(rep.Specs) != 1 || rep.Specs[0].Status != "differs" || len(rep.Specs[0].Divergences) == 0 {
		t.Errorf("json report: %+v", rep)
	}
}

func TestDiffWithoutAGPU(t *testing.T) {
	if _, err := cudatarget.Open(); err == nil {
		t.Skip("this machine has a CUDA device")
	}
	code, _, errs := cli(t, "diff", "--target", "sim", "--target", "cuda", library)
	if code != exitUsage || !strings.Contains(errs, "target cuda is not available on this machine") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// gen writes specs that load, run and pass on the simulator, the same
// bytes for the same seeds, and within the capabilities asked for.
func TestGenWritesRunnableSpecs(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := cli(t, "gen", "--count", "12", "--seed", "40", "--caps", "cuda", "--out", dir)
	if code != exitOK || !strings.Contains(out, "wrote 12 specs") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	specs, err := runner.Collect([]string{dir})
	if err != nil || len(specs) != 12 {
		t.Fatalf("%d specs load: %v", len(specs), err)
	}
	for _, s := range specs {
		for _, c := range s.Requires {
			if !strings.Contains("indefinite local-contexts concurrency pc-sampling spm thread-trace", c) {
				t.Errorf("%s requires %s, which cuda does not claim", s.Name, c)
			}
		}
	}
	code, out, errs = cli(t, "run", "--quiet", dir)
	if code != exitOK {
		t.Errorf("run on the generated specs: exit %d\n%s%s", code, out, errs)
	}
	again := t.TempDir()
	cli(t, "gen", "--count", "12", "--seed", "40", "--caps", "cuda", "--out", again)
	for _, s := range specs {
		a, _ := os.ReadFile(s.File)
		b, _ := os.ReadFile(filepath.Join(again, filepath.Base(s.File)))
		if string(a) != string(b) {
			t.Errorf("%s: another run of gen wrote other bytes", filepath.Base(s.File))
		}
	}
	if code, _, errs := cli(t, "gen", "--out", dir, "--caps", "warp-drive"); code != exitUsage || !strings.Contains(errs, `unknown capability "warp-drive"`) {
		t.Errorf("bad --caps: exit %d, %q", code, errs)
	}
}

// TestDiffStopsWhenInterrupted: an interrupted diff starts no more specs
// and says how far it got, where it used to start every remaining spec on
// both targets, each an "interrupted" error.
func TestDiffStopsWhenInterrupted(t *testing.T) {
	// The specs are read after the interrupt: each read is given
	// readGrace, which a loaded machine outlasted (make test failed with
	// "interrupted while reading it" at load 13); the reads are not what
	// this test is about (TestInterruptWhileReadingAFIFO is).
	grace := readGrace
	readGrace = time.Minute
	t.Cleanup(func() { readGrace = grace })
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalCause{sig: syscall.SIGTERM})
	var out, errb bytes.Buffer
	code := mainWith(ctx, []string{"diff", "--target", "sim", "--target", "sim", "--format", "json", "../../specs/"}, &out, &errb)
	if code != exitFail { // the process maps it to 143 (mainProcess)
		t.Errorf("exit %d, want %d\n%s", code, exitFail, errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted by SIGTERM: 0 of ") {
		t.Errorf("stderr does not say how far it got:\n%s", errb.String())
	}
	if strings.Contains(out.String(), `"error"`) {
		t.Errorf("specs were started after the interrupt:\n%.500s", out.String())
	}
}
