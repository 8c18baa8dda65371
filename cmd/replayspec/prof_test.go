package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const profSpec = "../../internal/rocprof/testdata/mi300.yaml"

func runProfCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = mainWith(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Every refusal: its message names what is missing or the conflict, and
// the exit status is 2.
func TestProfDiagnostics(t *testing.T) {
	kr := []string{"--replay-mode", "kernel", "--kernel-replay-beta-enabled"}
	pmc := []string{"--pmc", "SQ_WAVES", "TCC_HIT"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"RPV-1 kernel replay without --pmc", cat(kr), []string{"--replay-mode kernel needs counters", "--pmc", "(RPV-1)"}},
		{"RPV-1 kernel replay without the beta flag", cat(pmc, []string{"--replay-mode", "kernel"}), []string{"add --kernel-replay-beta-enabled", "(RPV-1)"}},
		{"RPV-1 both missing", []string{"--replay-mode", "kernel"}, []string{"needs counters", "add --kernel-replay-beta-enabled"}},
		{"RPV-7 thread trace", cat(pmc, kr, []string{"--att"}), []string{"cannot be combined with --att (thread trace)", "once per pass", "(RPV-7)"}},
		{"RPV-7 PC sampling", cat(pmc, kr, []string{"--pc-sampling-beta-enabled"}), []string{"cannot be combined with --pc-sampling-beta-enabled (PC sampling)", "(RPV-7)"}},
		{"RPV-7 PC sampling method", cat(pmc, kr, []string{"--pc-sampling-method", "host_trap"}), []string{"--pc-sampling-method (PC sampling)", "(RPV-7)"}},
		{"RPV-7 SPM", cat(pmc, kr, []string{"--spm"}), []string{"cannot be combined with --spm (SPM)", "(RPV-7)"}},
		{"empty --pmc group", cat([]string{"--pmc"}, kr), []string{"--pmc occurrence 1 names no counter"}},
		{"empty --pmc group among others", cat(pmc, []string{"--pmc=", "--pmc", "GRBM_COUNT"}), []string{"--pmc occurrence 2 names no counter"}},
		{"several groups with --pid", cat(pmc, []string{"--pmc", "GRBM_COUNT", "--pid", "42"}), []string{"--pid (attach mode) takes a single --pmc group, 2 were given"}},
		{"attach mode", cat(pmc, []string{"--pid", "42"}), []string{"--pid: attach mode is not available"}},
		{"several groups with --collection-period", cat(pmc, []string{"--pmc", "GRBM_COUNT", "--collection-period", "1:1:0"}), []string{"--collection-period takes a single --pmc group, 2 were given"}},
		{"unknown replay mode", cat(pmc, []string{"--replay-mode", "dispatch"}), []string{`--replay-mode "dispatch" is not a replay mode`}},
		{"unsupported format", cat(pmc, []string{"-f", "pftrace"}), []string{"--output-format pftrace is not produced"}},
		{"thread trace without replay", cat(pmc, []string{"--att"}), []string{"--att is not modelled"}},
		{"unknown option", cat(pmc, []string{"--frobnicate"}), []string{"unknown option --frobnicate"}},
		{"option without value", []string{"-d"}, []string{"-d needs a value"}},
		{"unknown counter", []string{"--pmc", "SQ_WAVES", "NOPE"}, []string{`--pmc counter "NOPE" is not a counter of any agent`}},
		{"group too big without kernel replay", []string{"--pmc", "TCC_HIT", "TCC_MISS"}, []string{"does not fit one hardware pass", "--replay-mode kernel"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"prof"}, c.args...), "-d", t.TempDir(), "--", profSpec)
			code, _, stderr := runProfCLI(args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestProfUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prof", "--pmc", "SQ_WAVES"}, `end the options with "--"`},
		{[]string{"prof", "--pmc", "SQ_WAVES", "--"}, `no spec after "--"`},
		{[]string{"prof", "--", "a.yaml", "b.yaml"}, "one spec"},
		{[]string{"prof", "--pmc", "SQ_WAVES", "--", "does-not-exist.yaml"}, "does-not-exist.yaml"},
	} {
		code, _, stderr := runProfCLI(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	code, stdout, _ := runProfCLI("prof", "--help")
	if code != exitOK || !strings.Contains(stdout, "--kernel-replay-beta-enabled") {
		t.Errorf("--help: exit %d\n%s", code, stdout)
	}
}

// RPV-7: kernel trace and stats are allowed under kernel replay, with a
// warning that they see one record per pass.
func TestProfWarnings(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES TCC_HIT TCC_MISS", "--replay-mode", "kernel",
		"--kernel-replay-beta-enabled", "--kernel-trace", "--stats", "-d", dir, "-o", "run", "--", profSpec)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"warning: --kernel-trace with --replay-mode kernel", "one record per pass", "warning: --stats with --replay-mode kernel"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	for _, f := range []string{"run_counter_collection.csv", "run_kernel_trace.csv", "run_kernel_stats.csv"} {
		if !strings.Contains(stdout, filepath.Join(dir, f)) {
			t.Errorf("%s not written:\n%s", f, stdout)
		}
	}
	trace, err := os.ReadFile(filepath.Join(dir, "run_kernel_trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(trace), "\n") - 1; n != 4 {
		t.Errorf("%d kernel trace rows, want 4 (2 dispatches x 2 passes)", n)
	}
	// Without kernel replay the same options warn about nothing.
	_, _, stderr = runProfCLI("prof", "--pmc", "SQ_WAVES", "--kernel-trace", "--stats", "-d", t.TempDir(), "--", profSpec)
	if strings.Contains(stderr, "warning") {
		t.Errorf("unexpected warning without kernel replay:\n%s", stderr)
	}
}

func TestCheckRocprofv3(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES SQ_INSTS_VALU TCC_HIT", "--pmc", "SQ_WAVES TCC_MISS",
		"--replay-mode", "kernel", "--kernel-replay-beta-enabled", "-f", "csv,json", "-d", dir, "--", profSpec); code != exitOK {
		t.Fatalf("prof: exit %d\n%s", code, stderr)
	}
	code, stdout, _ := runProfCLI("check-rocprofv3", dir)
	if code != exitOK || !strings.Contains(stdout, "2 file(s) checked, no problem") {
		t.Errorf("our output: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runProfCLI("check-rocprofv3", "--invariant", "GRBM_COUNT", dir); code != exitOK {
		t.Errorf("--invariant GRBM_COUNT: exit %d\n%s", code, stdout)
	}
	// Break it: a CSV with a Replay_Pass column, a JSON record without its pass.
	csvPath := filepath.Join(dir, "1000_counter_collection.csv")
	data, _ := os.ReadFile(csvPath)
	lines := strings.SplitN(string(data), "\n", 2)
	if err := os.WriteFile(csvPath, []byte(lines[0]+`,"Replay_Pass"`+"\n"+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "1000_results.json")
	data, _ = os.ReadFile(jsonPath)
	if err := os.WriteFile(jsonPath, bytes.Replace(data, []byte(`"replay_pass": 1`), []byte(`"replay_pass": 0`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runProfCLI("check-rocprofv3", dir)
	if code != exitFail {
		t.Errorf("broken output: exit %d, want 1\n%s", code, stdout)
	}
	for _, w := range []string{"1000_counter_collection.csv: RPV-6: ", "Replay_Pass column", "1000_results.json: RPV-8: dispatch 1: replay_pass 0 appears 2 times"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("report lacks %q:\n%s", w, stdout)
		}
	}
	for _, args := range [][]string{{"check-rocprofv3"}, {"check-rocprofv3", filepath.Join(dir, "nope")}, {"check-rocprofv3", t.TempDir()}, {"check-rocprofv3", "--bogus", dir}} {
		if code, _, _ := runProfCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
