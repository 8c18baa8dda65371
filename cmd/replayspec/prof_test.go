package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const profSpec = "../../rocprof/testdata/mi300.yaml"

func runProfCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = mainWith(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// Every refusal of a combination: its message names what is missing or the
// conflict, and the exit status is rocprofv3's for a fatal error, 1.
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
		{"RPV-1 the beta flag set false", cat(pmc, []string{"--replay-mode", "kernel", "--kernel-replay-beta-enabled=false"}), []string{"add --kernel-replay-beta-enabled", "(RPV-1)"}},
		{"RPV-1 both missing", []string{"--replay-mode", "kernel"}, []string{"needs counters", "add --kernel-replay-beta-enabled"}},
		{"RPV-7 thread trace", cat(pmc, kr, []string{"--att"}), []string{"cannot be combined with --att (thread trace)", "once per pass", "(RPV-7)"}},
		{"RPV-7 thread trace without intercept", cat(pmc, kr, []string{"--att-no-intercept"}), []string{"--att-no-intercept (thread trace)", "(RPV-7)"}},
		{"RPV-7 PC sampling", cat(pmc, kr, []string{"--pc-sampling-beta-enabled"}), []string{"cannot be combined with --pc-sampling-beta-enabled (PC sampling)", "(RPV-7)"}},
		{"RPV-7 SPM", cat(pmc, kr, []string{"--spm", "SQ_WAVES"}), []string{"cannot be combined with --spm (SPM)", "(RPV-7)"}},
		{"RPV-7 SPM interval", cat(pmc, kr, []string{"--spm-sample-interval", "10"}), []string{"--spm-sample-interval (SPM)", "(RPV-7)"}},
		{"PC sampling settings without the beta flag", cat(pmc, kr, []string{"--pc-sampling-method", "host_trap"}), []string{"need --pc-sampling-beta-enabled"}},
		{"empty --pmc group", cat([]string{"--pmc"}, kr), []string{"--pmc occurrence 1 names no counter"}},
		{"empty --pmc group among others", cat(pmc, []string{"--pmc=", "--pmc", "GRBM_COUNT"}), []string{"--pmc occurrence 2 names no counter"}},
		{"several groups with --pid", cat(pmc, []string{"--pmc", "GRBM_COUNT", "--pid", "42"}), []string{"(multiple --pmc options) cannot be combined with --pid"}},
		{"attach mode", cat(pmc, []string{"-p", "42"}), []string{"-p: attach mode is not available"}},
		{"several groups with a collection period", cat(pmc, []string{"--pmc", "GRBM_COUNT", "-P", "1:1:0"}), []string{"cannot be combined with -P"}},
		{"a format prof does not write", cat(pmc, []string{"-f", "pftrace"}), []string{"--output-format pftrace is not produced"}},
		{"thread trace without replay", cat(pmc, []string{"--att"}), []string{"--att (thread trace) is not modelled"}},
		{"system trace", cat(pmc, []string{"-s"}), []string{"-s is not modelled"}},
		{"unknown counter", []string{"--pmc", "SQ_WAVES", "NOPE"}, []string{`--pmc counter "NOPE" is not a counter of any agent`}},
		{"group too big without kernel replay", []string{"--pmc", "TCC_HIT", "TCC_MISS"}, []string{"does not fit one hardware pass", "--replay-mode kernel"}},
		{"a spec that does not load", []string{"--pmc", "SQ_WAVES", "-d", "x", "--", "does-not-exist.yaml"}, []string{"does-not-exist.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"prof"}, c.args...)
			if !strings.Contains(strings.Join(c.args, " "), " -- ") {
				args = append(args, "-d", t.TempDir(), "--", profSpec)
			}
			code, _, stderr := runProfCLI(args...)
			if code != exitFail {
				t.Errorf("exit %d, want %d (rocprofv3's fatal error); stderr:\n%s", code, exitFail, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// A command line that does not parse is argparse's error: exit status 2.
func TestProfUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prof", "--pmc", "SQ_WAVES"}, `end the options with "--"`},
		{[]string{"prof", "--pmc", "SQ_WAVES", "--"}, `no spec after "--"`},
		{[]string{"prof", "--", "a.yaml", "b.yaml"}, "one spec"},
		{[]string{"prof", "--frobnicate", "--", profSpec}, "unknown option --frobnicate"},
		{[]string{"prof", "-d", "--", profSpec}, "-d needs a value"},
		{[]string{"prof", "--pmc", "A", "-f", "csv,json", "--", profSpec}, `-f: invalid choice "csv,json"`},
		{[]string{"prof", "--pmc", "A", "--stats", "maybe", "--", profSpec}, `--stats takes an optional true/false value, not "maybe"`},
		{[]string{"prof", "--pmc", "A", "--replay-mode", "dispatch", "--", profSpec}, `--replay-mode: invalid choice "dispatch"`},
		{[]string{"prof", "--pmc", "A", "--pc-sampling-unit", "waves", "--", profSpec}, `--pc-sampling-unit: invalid choice "waves"`},
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
// warning that they see one record per pass. -f takes its formats as
// separate words, in any case.
func TestProfWarnings(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES TCC_HIT TCC_MISS", "--replay-mode", "kernel",
		"--kernel-replay-beta-enabled", "--kernel-trace", "--stats", "-f", "CSV", "-d", dir, "-o", "run", "--", profSpec)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"warning: --kernel-trace with --replay-mode kernel", "one record per pass", "warning: --stats with --replay-mode kernel"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	for _, f := range []string{"run_counter_collection.csv", "run_kernel_trace.csv", "run_kernel_stats.csv", "run_domain_stats.csv", "run_agent_info.csv"} {
		if !strings.Contains(stdout, filepath.Join(dir, f)) {
			t.Errorf("%s not written:\n%s", f, stdout)
		}
	}
	if strings.Contains(stdout, "results.json") {
		t.Errorf("-f CSV wrote JSON:\n%s", stdout)
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

// Without -d and -o the files land where rocprofv3 puts them:
// ./<hostname>/<pid>_..., csv and json.
func TestProfDefaultOutput(t *testing.T) {
	spec, err := filepath.Abs(profSpec)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES", "--", spec)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, f := range []string{"replayspec-sim/1000_results.json", "replayspec-sim/1000_counter_collection.csv", "replayspec-sim/1000_agent_info.csv"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v (wrote:\n%s)", f, err, stdout)
		}
	}
}

// A spec's expect block is judged on every run prof makes.
func TestProfExpectations(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	data, err := os.ReadFile(profSpec)
	if err != nil {
		t.Fatal(err)
	}
	body := string(data) + "expect:\n  passes: {inc: 2, axpy: 2}\n  completions: {inc: 1, axpy: 1}\n  records: {counter_collection: 4}\n"
	if err := os.WriteFile(good, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(body, "inc: 2,", "inc: 3,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"prof", "--pmc", "SQ_WAVES", "--pmc", "TCC_HIT", "--replay-mode", "kernel", "--kernel-replay-beta-enabled", "-d", t.TempDir(), "--"}
	if code, _, stderr := runProfCLI(append(args, good)...); code != exitOK {
		t.Errorf("a spec whose expectations hold: exit %d\n%s", code, stderr)
	}
	code, _, stderr := runProfCLI(append(args, bad)...)
	if code != exitFail || !strings.Contains(stderr, "[EXPECT] expect.passes: inc runs 3 passes") || !strings.Contains(stderr, "inc ran 2 passes") {
		t.Errorf("a failed expectation: exit %d\n%s", code, stderr)
	}
	// Application replay: every run is judged.
	code, _, stderr = runProfCLI("prof", "--pmc", "SQ_WAVES", "--pmc", "TCC_HIT", "-d", t.TempDir(), "--", good)
	if code != exitFail || !strings.Contains(stderr, "pass_1: [EXPECT]") || !strings.Contains(stderr, "pass_2: [EXPECT]") {
		t.Errorf("expectations per application replay run: exit %d\n%s", code, stderr)
	}
}

// An input file gives kernel replay its groups and filters per job.
func TestProfInputFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.yaml")
	body := "jobs:\n  - pmc_groups: [[SQ_WAVES, TCC_HIT], [TCC_MISS]]\n    replay_mode: kernel\n    kernel_replay_beta_enabled: true\n    kernel_include_regex: sax\n    output_config: true\n"
	if err := os.WriteFile(in, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runProfCLI("prof", "-i", in, "-d", out, "-o", "run", "--", profSpec)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	csv, err := os.ReadFile(filepath.Join(out, "run_counter_collection.csv"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if strings.Contains(string(csv), `"increment"`) || strings.Count(string(csv), `"saxpy"`) != 3 {
		t.Errorf("the job's filter keeps saxpy's 2 passes (3 counters) only:\n%s", csv)
	}
	if code, stdout, _ := runProfCLI("check-rocprofv3", out); code != exitOK {
		t.Errorf("check-rocprofv3 with the job's config.json: exit %d\n%s", code, stdout)
	}
}

func TestCheckRocprofv3(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES SQ_INSTS_VALU TCC_HIT", "--pmc", "SQ_WAVES TCC_MISS",
		"--replay-mode", "kernel", "--kernel-replay-beta-enabled", "--output-config", "-d", dir, "--", profSpec); code != exitOK {
		t.Fatalf("prof: exit %d\n%s", code, stderr)
	}
	code, stdout, _ := runProfCLI("check-rocprofv3", dir)
	if code != exitOK || !strings.Contains(stdout, "3 file(s) checked, no problem") {
		t.Errorf("our output: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runProfCLI("check-rocprofv3", "--invariant", "GRBM_COUNT", dir); code != exitOK {
		t.Errorf("--invariant GRBM_COUNT: exit %d\n%s", code, stdout)
	}
	// The requested groups from the command line, when there is no config.json.
	if err := os.Remove(filepath.Join(dir, "replayspec-sim", "1000_config.json")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := runProfCLI("check-rocprofv3", "--pmc", "SQ_WAVES", "SQ_INSTS_VALU", "TCC_HIT", "--pmc=SQ_WAVES,TCC_MISS", dir); code != exitOK {
		t.Errorf("--pmc the run's groups: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runProfCLI("check-rocprofv3", "--pmc", "SQ_WAVES", "TCC_MISS", "--pmc", "SQ_WAVES", "SQ_INSTS_VALU", "TCC_HIT", dir)
	if code != exitFail || !strings.Contains(stdout, "RPV-3: dispatch 1: replay_pass 0 collected") {
		t.Errorf("--pmc in the other order: exit %d\n%s", code, stdout)
	}
	// Break it: a CSV with a Replay_Pass column, a JSON record claiming another pass.
	csvPath := filepath.Join(dir, "replayspec-sim", "1000_counter_collection.csv")
	data, _ := os.ReadFile(csvPath)
	lines := strings.SplitN(string(data), "\n", 2)
	if err := os.WriteFile(csvPath, []byte(lines[0]+`,"Replay_Pass"`+"\n"+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "replayspec-sim", "1000_results.json")
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
	for _, args := range [][]string{{"check-rocprofv3"}, {"check-rocprofv3", filepath.Join(dir, "nope")}, {"check-rocprofv3", t.TempDir()},
		{"check-rocprofv3", "--bogus", dir}, {"check-rocprofv3", "--pmc", dir}, {"check-rocprofv3", "--pmc=", dir}} {
		if code, _, _ := runProfCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
