package specgen_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// The properties every generated spec must have:
//
//  1. it validates, and its YAML reads back as the same spec;
//  2. it runs on the simulator to its end, within its budget, without a
//     harness error;
//  3. every rule oracle holds on the reference engine's trace (and the
//     trace shows something: a spec judged on nothing fails);
//  4. its trace is the same bytes on a second run.
//
// A failure is shrunk by rapid to a minimal spec, which is written to
// testdata/found/NAME.yaml (the last spec written is the minimal one,
// since rapid runs it again to report): `replayspec run` on that file
// replays it, and it is ready to join the library once the bug is fixed.
//
// go test runs a bounded number of specs (-rapid.checks, 100 by default,
// 20 with -short); `make explore` runs many more.

func TestGeneratedSpecsHold(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := specgen.Spec(specgen.Config{}).Draw(rt, "spec")
		if err := Holds(s); err != nil {
			file := writeFound(t, s, err)
			rt.Fatalf("%v\nthe spec: %s (replayspec run %s)", err, file, file)
		}
	})
}

// TestGeneratedSpecsForOneDevice: specs within what the CUDA target
// claims (one device, no AMD counters, no planted snapshot or restore
// failure, no tool actions) hold on the simulator too; these are the specs
// `replayspec gen --caps cuda` writes for a differential run.
func TestGeneratedSpecsForOneDevice(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := specgen.Spec(specgen.Config{Caps: specgen.CUDACaps}).Draw(rt, "spec")
		for _, c := range s.Requires {
			if !contains(specgen.CUDACaps, c) {
				rt.Fatalf("requires %s, which the configuration does not allow", c)
			}
		}
		if err := Holds(s); err != nil {
			file := writeFound(t, s, err)
			rt.Fatalf("%v\nthe spec: %s", err, file)
		}
	})
}

func contains(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// Holds checks the four properties on s.
func Holds(s spec.Spec) error {
	if err := spec.Validate(s); err != nil {
		return fmt.Errorf("does not validate: %w", err)
	}
	text, err := specgen.YAML(s)
	if err != nil {
		return fmt.Errorf("cannot be written: %w", err)
	}
	back, err := spec.Parse("generated.yaml", text)
	if err != nil {
		return fmt.Errorf("its YAML does not read back: %w\n%s", err, text)
	}
	back.File = s.File
	if d := cmp.Diff(s, back, cmpopts.EquateEmpty()); d != "" {
		return fmt.Errorf("its YAML reads back as another spec (-generated +read):\n%s", d)
	}
	first, err := runOnce(s)
	if err != nil {
		return err
	}
	again, err := runOnce(s)
	if err != nil {
		return fmt.Errorf("second run: %w", err)
	}
	if !bytes.Equal(first, again) {
		return fmt.Errorf("the trace differs between two runs:\n%s", firstDifference(first, again))
	}
	return nil
}

// runOnce runs s on the simulator and returns its trace, or why the run
// or its judgement failed.
func runOnce(s spec.Spec) ([]byte, error) {
	r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}, Timeout: 20 * time.Second})
	tr := trace.Marshal(r.Trace)
	switch v := r.Verdict(); v {
	case runner.Pass:
		return tr, nil
	case runner.Error:
		return tr, fmt.Errorf("harness error: %w", r.Err)
	case runner.Skip:
		return tr, errors.New("skipped: " + r.SkipReason)
	}
	var b strings.Builder
	for _, vi := range r.Violations {
		b.WriteString("\n" + vi.String())
	}
	if r.NothingJudged {
		b.WriteString("\nno oracle examined anything")
	}
	return tr, fmt.Errorf("the oracles report a violation on the reference engine:%s", b.String())
}

func firstDifference(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  first:  %s\n  second: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("one trace has %d lines, the other %d", len(al), len(bl))
}

// writeFound writes the failing spec where a developer can replay it.
func writeFound(t *testing.T, s spec.Spec, why error) string {
	dir := os.Getenv("REPLAYSPEC_FOUND")
	if dir == "" {
		dir = filepath.Join("testdata", "found")
	}
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	s.Name = "found-" + strings.TrimPrefix(name, "test")
	text, err := specgen.YAML(s, "Found by "+t.Name()+" (internal/specgen), shrunk by rapid:", why.Error(),
		"Replay: replayspec run THIS-FILE. Once fixed, give it a name, say what it shows and add it to specs/.")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	file := filepath.Join(dir, s.Name+".yaml")
	if err == nil {
		err = os.WriteFile(file, text, 0o644)
	}
	if err != nil {
		t.Logf("cannot write the failing spec: %v", err)
	}
	return file
}
