package driver_test

import (
	"bytes"
	"context"

	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/replayspec/replayspec/golden"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

const (
	library  = "../specs"
	replayer = "../examples/trace-replayer/driver.py"
)

// TestTraceReplayerLanguageNeutral runs the library through the Python
// driver: the protocol spoken by a program that shares no code with ours
// gives the in-process verdicts.
func TestTraceReplayerLanguageNeutral(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the second-language driver cannot run here")
	}
	// The interpreter itself, not a version manager's shim (pyenv's costs
	// 150 ms a start).
	python := "python3"
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		python = "'" + string(bytes.TrimSpace(out)) + "'"
	}
	specs, err := runner.Collect([]string{library})
	if err != nil {
		// The library's own tests report a spec that does not load;
		// here the protocol is tested on those that do.
		t.Logf("specs left out: %v", err)
	}
	if len(specs) == 0 {
		t.Fatal("no spec loaded")
	}
	if testing.Short() {
		// One Python process a spec: a spread of the library here, all
		// of it in make test-heavy.
		picked := make([]spec.Spec, 0, 16)
		for i := range 16 {
			picked = append(picked, specs[i*(len(specs)-1)/15])
		}
		specs = picked
	}
	// Fresh recordings, so that only the protocol is tested here; the
	// goldens the driver reads by default have their own test (golden/).
	dir := t.TempDir()
	for _, s := range specs {
		tr, _ := simtarget.Sim{}.Run(context.Background(), spec.Defaults(s), target.Options{})
		// A case of a matrix is BASE/ID: its recording lives in BASE/, as
		// in golden/.
		f := filepath.Join(dir, s.Name+".ndjson")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, trace.Marshal(tr), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := exectarget.NewExec(python+" "+replayer+" --traces "+dir, exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Handshake().Implementation.Name; got != "trace-replayer (Python example)" {
		t.Errorf("implementation %q", got)
	}
	viaPython := runner.RunAll(context.Background(), specs, runner.Options{Target: tg}, nil)
	inProc := runner.RunAll(context.Background(), specs, runner.Options{Target: simtarget.Sim{}}, nil)
	for i, want := range inProc {
		got := viaPython[i]
		if got.Verdict() != want.Verdict() {
			t.Errorf("%s: verdict through python %s, in-process %s\n%v", want.Spec.Name, got.Verdict(), want.Verdict(), got.Err)
		}
		if !bytes.Equal(trace.Marshal(got.Trace), trace.Marshal(want.Trace)) {
			t.Errorf("%s: the replayed trace differs", want.Spec.Name)
		}
	}

	// With its default directory it replays golden/.
	tg, err = exectarget.NewExec(python+" "+replayer, exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.Run(context.Background(), specs[0], runner.Options{Target: tg})
	if _, err := golden.Read(specs[0].Name); err == nil && r.Verdict() != inProc[0].Verdict() {
		t.Errorf("%s from golden/: %s, want %s\n%v", specs[0].Name, r.Verdict(), inProc[0].Verdict(), r.Err)
	}
	// A spec it has no recording for is an error that says so.
	s := specs[0]
	s.Name = "never-recorded"
	r = runner.Run(context.Background(), s, runner.Options{Target: tg})
	if r.Verdict() != runner.Error || !bytes.Contains([]byte(r.Err.Error()), []byte("no recorded trace for spec 'never-recorded'")) {
		t.Errorf("unrecorded spec: %s %v", r.Verdict(), r.Err)
	}
}
