package driver_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

var update = flag.Bool("update", false, "rewrite examples/trace-replayer/traces from the reference engine")

const (
	library   = "../specs"
	recorded  = "../examples/trace-replayer/traces"
	replayer  = "../examples/trace-replayer/driver.py"
	updateCmd = "go test ./driver -run TestTraceReplayer -update"
)

// TestTraceReplayerFixtures: the recorded traces the Python example
// replays are the reference engine's, byte for byte (a golden test; review
// the diff after -update).
func TestTraceReplayerFixtures(t *testing.T) {
	specs, err := runner.Collect([]string{library})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		tr, _ := target.Sim{}.Run(context.Background(), spec.Defaults(s), target.Options{})
		want := trace.Marshal(tr)
		path := filepath.Join(recorded, s.Name+".ndjson")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no recorded trace: run %s", s.Name, updateCmd)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the recorded trace is not the engine's any more: run %s and review the diff", s.Name, updateCmd)
		}
	}
}

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
		t.Fatal(err)
	}
	// The fixtures' own test says when they are stale; here the verdicts
	// are compared on fresh recordings, so that only the protocol is tested.
	dir := t.TempDir()
	for _, s := range specs {
		tr, _ := target.Sim{}.Run(context.Background(), spec.Defaults(s), target.Options{})
		if err := os.WriteFile(filepath.Join(dir, s.Name+".ndjson"), trace.Marshal(tr), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := target.NewExec(python+" "+replayer+" --traces "+dir, target.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Handshake().Implementation.Name; got != "trace-replayer (Python example)" {
		t.Errorf("implementation %q", got)
	}
	start := time.Now()
	viaPython := runner.RunAll(context.Background(), specs, runner.Options{Target: tg}, nil)
	elapsed := time.Since(start)
	inProc := runner.RunAll(context.Background(), specs, runner.Options{Target: target.Sim{}}, nil)
	for i, want := range inProc {
		got := viaPython[i]
		if got.Verdict() != want.Verdict() {
			t.Errorf("%s: verdict through python %s, in-process %s\n%v", want.Spec.Name, got.Verdict(), want.Verdict(), got.Err)
		}
		if !bytes.Equal(trace.Marshal(got.Trace), trace.Marshal(want.Trace)) {
			t.Errorf("%s: the replayed trace differs", want.Spec.Name)
		}
	}
	t.Logf("%d specs through python3 in %s", len(specs), elapsed.Round(time.Millisecond))

	// With its default directories it finds the checked-in recordings.
	tg, err = target.NewExec(python+" "+replayer, target.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.Run(context.Background(), specs[0], runner.Options{Target: tg})
	if r.Verdict() != inProc[0].Verdict() {
		t.Errorf("%s from the checked-in recordings: %s, want %s\n%v", specs[0].Name, r.Verdict(), inProc[0].Verdict(), r.Err)
	}
	// A spec it has no recording for is an error that says so.
	s := specs[0]
	s.Name = "never-recorded"
	r = runner.Run(context.Background(), s, runner.Options{Target: tg})
	if r.Verdict() != runner.Error || !bytes.Contains([]byte(r.Err.Error()), []byte("no recorded trace for spec 'never-recorded'")) {
		t.Errorf("unrecorded spec: %s %v", r.Verdict(), r.Err)
	}
}
