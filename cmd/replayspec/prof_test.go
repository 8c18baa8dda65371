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
		{"several groups with a collection period", cat(pmc, []string{"--pmc", "GRBM_COUNT", "-P", "1:1:0"}), []string{"cannot be combined with -P"}},
		{"only formats prof does not write", cat(pmc, []string{"-f", "pftrace"}), []string{"-f pftrace: replayspec prof writes only csv and json"}},
		{"an output directory that is a file", cat(pmc, []string{"-d", profSpec, "--", profSpec}), []string{"is a file, not a directory: give -d a directory"}},
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
	for _, args := range [][]string{{"prof", "--help"}, {"prof"}} { // rocprofv3 alone prints its help
		code, stdout, _ := runProfCLI(args...)
		if code != exitOK || !strings.Contains(stdout, "--kernel-replay-beta-enabled") {
			t.Errorf("%v: exit %d\n%s", args, code, stdout)
		}
	}
}

// Options rocprofv3 has that ask for what the simulator cannot produce are
// accepted with one warning naming what is not written; those it can
// produce are honoured.
func TestProfRocprofv3Options(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--hip-trace"}, "warning: --hip-trace: no HIP API trace is written"},
		{[]string{"-s"}, "warning: -s: the kernel dispatch trace is written"},
		{[]string{"--att"}, "warning: --att: no thread trace is written"},
		{[]string{"-p", "42"}, "warning: -p: attach mode is not modelled"},
		{[]string{"-f", "csv", "rocpd"}, "warning: -f rocpd: not produced"},
	} {
		dir := t.TempDir()
		args := append(append([]string{"prof", "--pmc", "SQ_WAVES"}, c.args...), "-d", dir, "--", profSpec)
		code, _, stderr := runProfCLI(args...)
		if code != exitOK || !strings.Contains(stderr, c.want) || strings.Count(stderr, "warning") != 1 {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 0 and one warning %q", c.args, code, stderr, c.want)
		}
	}
	// -s turns the kernel trace on.
	dir := t.TempDir()
	if code, stdout, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES", "-s", "-d", dir, "--", profSpec); code != exitOK || !strings.Contains(stdout, "kernel_trace.csv") {
		t.Errorf("-s: exit %d, no kernel trace:\n%s%s", code, stdout, stderr)
	}
	// -v prints the version, -L the counters, --echo the command; nothing runs.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prof", "-v"}, "replayspec"},
		{[]string{"prof", "-L"}, "GPU:1 MI300X (gfx942)"},
		{[]string{"prof", "-L", "--", profSpec}, "TCC (1 per pass): TCC_HIT TCC_MISS TCC_EA_RDREQ"},
		{[]string{"prof", "--pmc", "SQ_WAVES", "--echo", "--", profSpec}, "command: [\"" + profSpec + "\"]"},
	} {
		code, stdout, stderr := runProfCLI(c.args...)
		if code != exitOK || !strings.Contains(stdout, c.want) || strings.Contains(stdout, "wrote") {
			t.Errorf("%v: exit %d, stdout:\n%s%s\nwant %q", c.args, code, stdout, stderr, c.want)
		}
	}
	// --log-level config prints each run's configuration.
	_, _, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES", "--log-level", "config", "-d", t.TempDir(), "--", profSpec)
	if !strings.Contains(stderr, "- rocprofv3 configuration:") || !strings.Contains(stderr, "log_level        = config") {
		t.Errorf("--log-level config:\n%s", stderr)
	}
}

// prof never writes over the files of an earlier run silently: rocprofv3's
// default names carry the process id, so a new run never meets them; with
// -o NAME rocprofv3 writes over, and so does prof.
func TestProfExistingOutput(t *testing.T) {
	dir := t.TempDir()
	args := []string{"prof", "--pmc", "SQ_WAVES", "-d", dir, "--", profSpec}
	if code, _, stderr := runProfCLI(args...); code != exitOK {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runProfCLI(args...)
	if code != exitFail || !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, "pid 1000") || strings.Contains(stdout, "wrote") {
		t.Errorf("second run into the same directory: exit %d\n%s%s", code, stdout, stderr)
	}
	named := []string{"prof", "--pmc", "SQ_WAVES", "-o", "run", "-d", dir, "--", profSpec}
	for i := 0; i < 2; i++ {
		if code, _, stderr := runProfCLI(named...); code != exitOK {
			t.Errorf("-o run, run %d: exit %d\n%s", i+1, code, stderr)
		}
	}
}

// A spec with a matrix runs case by case, each in a folder of its own.
func TestProfMatrixSpec(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runProfCLI("prof", "--pmc", "SQ_WAVES", "--replay-mode", "kernel", "--kernel-replay-beta-enabled",
		"-d", dir, "--", "../../specs/counters-by-agent-kind.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, kind := range []string{"kind=MI200", "kind=MI300", "kind=consumer"} {
		if _, err := os.Stat(filepath.Join(dir, kind, "replayspec-sim", "1000_results.json")); err != nil {
			t.Errorf("case %s: %v\n%s", kind, err, stdout)
		}
	}
	if strings.Contains(stderr, "ParseCases") || strings.Contains(stderr, "LoadCases") {
		t.Errorf("a Go name in a message:\n%s", stderr)
	}
}

// prof runs every library spec that has an application without a failure
// of its own making: the spec's expectations about its own tool are not
// judged, the application's are.
func TestProfLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole library through prof")
	}
	specs, err := filepath.Glob("../../specs/*.yaml")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no library specs: %v", err)
	}
	lines := [][]string{
		{"--pmc", "SQ_WAVES", "TCC_HIT", "--pmc", "SQ_WAVES,GRBM_COUNT", "--replay-mode", "kernel", "--kernel-replay-beta-enabled", "--kernel-trace"},
		{"--pmc", "SQ_WAVES", "--pmc", "TCC_HIT"},
	}
	for _, f := range specs {
		for _, line := range lines {
			args := append(append([]string{"prof"}, line...), "-d", t.TempDir(), "--", f)
			code, stdout, stderr := runProfCLI(args...)
			if code != exitOK {
				t.Errorf("%s %s: exit %d\n%s%s", filepath.Base(f), strings.Join(line, " "), code, stdout, stderr)
			}
		}
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
	args := []string{"prof", "--pmc", "SQ_WAVES", "--pmc", "TCC_HIT", "--replay-mode", "kernel", "--kernel-replay-beta-enabled", "-d", t.TempDir(), "-o", "run", "--"}
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
	// A spec with a tool of its own: expectations about that tool are not
	// judged (and prof says so), the application's are.
	withTool := filepath.Join(dir, "tool.yaml")
	toolBody := string(data) + "tool:\n  plan: {passes: 5}\nexpect:\n  passes: {inc: 5}\n  completions: {inc: 1, axpy: 1}\n  memory: {x: {all: 8}}\n"
	if err := os.WriteFile(withTool, []byte(toolBody), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runProfCLI(append(args, withTool)...)
	if code != exitOK || !strings.Contains(stdout, "expect: passes not judged (about the spec's own tool, which rocprofv3 replaces)") {
		t.Errorf("a spec with a tool: exit %d\n%s%s", code, stdout, stderr)
	}
	broken := filepath.Join(dir, "tool-bad.yaml")
	if err := os.WriteFile(broken, []byte(strings.Replace(toolBody, "all: 8", "all: 9", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runProfCLI(append(args, broken)...)
	if code != exitFail || !strings.Contains(stderr, "expect.memory: buffer x holds 9") {
		t.Errorf("the application's memory is judged: exit %d\n%s", code, stderr)
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
