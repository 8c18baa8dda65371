package rocprof

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The grammar is rocprofv3.py's argparse: what parses, to what, and what
// is a usage error (exit status 2).
func TestGrammar(t *testing.T) {
	on := func(dest string) func(Values) bool { return func(v Values) bool { return v.on(dest) } }
	off := func(dest string) func(Values) bool { return func(v Values) bool { return v.has(dest) && !v.on(dest) } }
	cases := []struct {
		args   string
		holds  func(Values) bool
		reason string
	}{
		{"--kernel-trace", on("kernel_trace"), "a boolean alone is true"},
		{"--kernel-trace=true", on("kernel_trace"), "--x=BOOL"},
		{"--kernel-trace=false", off("kernel_trace"), "--x=false turns it off"},
		{"--stats false", off("stats"), "--x BOOL: the value may follow as a word"},
		{"--stats=0", off("stats"), "0 is false"},
		{"--stats ON", on("stats"), "truth values are any case"},
		{"--kernel-replay-beta-enabled no", off("kernel_replay_beta_enabled"), "no is false"},
		{"--att --pmc A", on("advanced_thread_trace"), "an option after a boolean is not its value"},
		{"-T", on("truncate_kernels"), "short form of --truncate-kernels"},
		{"-Tno", off("truncate_kernels"), "a short option's value may be attached"},
		{"-f CSV", func(v Values) bool { return slices.Equal(v.list("output_format"), []string{"csv"}) }, "formats are lower-cased"},
		{"-f csv json", func(v Values) bool { return slices.Equal(v.list("output_format"), []string{"csv", "json"}) }, "formats are space separated"},
		{"-dout", func(v Values) bool { return v.str("output_directory") == "out" }, "-dDIR"},
		{"-d=out", func(v Values) bool { return v.str("output_directory") == "out" }, "-d=DIR"},
		{"--output-directory=out", func(v Values) bool { return v.str("output_directory") == "out" }, "--x=VALUE"},
		{"-A type-relative", func(v Values) bool { return v.str("agent_index") == "type-relative" }, "-A is --agent-index"},
		{"--pmc A B --pmc C,D", func(v Values) bool {
			g := v["pmc"].Groups
			return len(g) == 2 && slices.Equal(g[0], []string{"A", "B"}) && slices.Equal(g[1], []string{"C", "D"})
		}, "one group per --pmc, commas separate counters as the tool library reads them"},
		{"--pmc", func(v Values) bool { return len(v["pmc"].Groups) == 1 && len(v["pmc"].Groups[0]) == 0 }, "--pmc takes zero or more (Plan refuses the empty group)"},
		{"--spm SQ_WAVES", func(v Values) bool { return slices.Equal(v.list("spm"), []string{"SQ_WAVES"}) }, "--spm takes counters"},
		{"--spm", func(v Values) bool { return v.has("spm") }, "--spm takes zero or more"},
		{"--kernel-iteration-range [1-3] 5", func(v Values) bool {
			return slices.Equal(v.list("kernel_iteration_range"), []string{"[1-3]", "5"})
		}, "ranges take one or more words"},
		{"-i in.yaml -P 1:1:0", func(v Values) bool { return v.str("input") == "in.yaml" && v.has("collection_period") }, "-i and -P"},
		{"-p 12", func(v Values) bool { return v.str("pid") == "12" }, "-p is --pid"},
		{"--attach 12", func(v Values) bool { return v.str("pid") == "12" }, "--attach is --pid"},
		{"--pc-sampling-method HOST_TRAP", func(v Values) bool { return v.str("pc_sampling_method") == "host_trap" }, "lower-cased choices"},
	}
	for _, c := range cases {
		cmd, err := ParseArgs(append(strings.Fields(c.args), "--", "s.yaml"))
		if err != nil {
			t.Errorf("%q (%s): %v", c.args, c.reason, err)
			continue
		}
		if !c.holds(cmd.Values) {
			t.Errorf("%q (%s): parsed as %+v", c.args, c.reason, cmd.Values)
		}
		if cmd.Spec != "s.yaml" {
			t.Errorf("%q: spec %q", c.args, cmd.Spec)
		}
	}
}

func TestGrammarErrors(t *testing.T) {
	cases := []struct {
		args string
		want string
	}{
		{"--stats maybe --", `--stats takes an optional true/false value, not "maybe"`},
		{"-f csv,json --", `-f: invalid choice "csv,json" (choose from csv, json, pftrace, otf2, rocpd)`},
		{"-f --", "-f needs at least one value"},
		{"--replay-mode Kernel --", `--replay-mode: invalid choice "Kernel"`},
		{"-A first --", `-A: invalid choice "first"`},
		{"--pid twelve --", `--pid: invalid integer value "twelve"`},
		{"--spm-sample-interval x --", `--spm-sample-interval: invalid integer value "x"`},
		{"--pc-sampling-unit waves --", `--pc-sampling-unit: invalid choice "waves"`},
		{"--frobnicate --", "unknown option --frobnicate"},
		{"--kernel-trac --", "unknown option --kernel-trac"}, // allow_abbrev=False
		{"-d --", "-d needs a value"},
		{"--pmc A", `end the options with "--"`},
		{"--pmc A --", `no spec after "--"`},
		{"-- a.yaml b.yaml", "one spec"},
		{"stray --", `unexpected argument "stray"`},
	}
	for _, c := range cases {
		_, err := ParseArgs(strings.Fields(c.args))
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}

// plan parses and plans a command line, returning the plan's error too.
func planOf(t *testing.T, args string) (*Plan, error) {
	t.Helper()
	cmd, err := ParseArgs(append(strings.Fields(args), "--", "s.yaml"))
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return cmd.Plan(nil)
}

// Combinations rocprofv3 refuses (fatal errors, exit status 1), with the
// rule each shows.
func TestPlanRefusals(t *testing.T) {
	kr := "--pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled "
	cases := []struct {
		args string
		rule string
		want string
	}{
		{"--replay-mode kernel --kernel-replay-beta-enabled", "RPV-1", "needs counters"},
		{"--pmc A --replay-mode kernel", "RPV-1", "add --kernel-replay-beta-enabled"},
		{"--pmc A --replay-mode kernel --kernel-replay-beta-enabled=false", "RPV-1", "add --kernel-replay-beta-enabled"},
		{kr + "--att", "RPV-7", "--att (thread trace)"},
		{kr + "--advanced-thread-trace", "RPV-7", "--advanced-thread-trace (thread trace)"},
		{kr + "--att-no-intercept", "RPV-7", "--att-no-intercept (thread trace)"},
		{kr + "--pc-sampling-beta-enabled", "RPV-7", "--pc-sampling-beta-enabled (PC sampling)"},
		{kr + "--spm SQ_WAVES", "RPV-7", "--spm (SPM)"},
		{kr + "--spm-sample-interval 10", "RPV-7", "--spm-sample-interval (SPM)"},
		{kr + "--pc-sampling-method host_trap", "", "need --pc-sampling-beta-enabled"},
		{"--pmc A --pmc", "", "--pmc occurrence 2 names no counter"},
		{"--pmc A -f rocpd", "", "rocpd, is a database prof does not write"},
		{"--pmc A -s", "", "-s is not modelled"},
		{"--pmc A --att", "", "--att (thread trace) is not modelled"},
		{"--pmc A B --pmc C -P 1:1:0", "", "several counter groups in separate runs (multiple --pmc options) cannot be combined with -P"},
		{"--pmc A B --pmc C --pid 3", "", "cannot be combined with --pid"},
		{"--pmc A -p 42", "", "attach mode is not available"},
		{"--pmc A --kernel-include-regex (", "", "is not a regular expression"},
		{"--pmc A --kernel-iteration-range 3-x", "", "bad range"},
	}
	for _, c := range cases {
		_, err := planOf(t, c.args)
		found := false
		for _, e := range Errors(err) {
			var d *Diagnostic
			if errors.As(e, &d) && d.Rule == c.rule && strings.Contains(d.Msg, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: %v, want a diagnostic (rule %q) containing %q", c.args, err, c.rule, c.want)
		}
	}
}

func TestPlanWarnings(t *testing.T) {
	cases := []struct {
		args string
		want string
	}{
		{"--pmc A --replay-mode kernel --kernel-replay-beta-enabled --kernel-trace --stats", "every pass of a replayed dispatch counts as a call"},
		{"--pmc A --replay-mode kernel --kernel-replay-beta-enabled --kernel-trace", "one record per pass"},
		{"--pmc A --kernel-replay-beta-enabled", "has no effect without --replay-mode kernel"},
		{"--pmc A --stats", "no domain is traced"},
		{"--pmc A -P 1:1:0", "is ignored"},
		{"--pmc A --spm-beta-enabled", "has no effect without --spm"},
	}
	for _, c := range cases {
		p, err := planOf(t, c.args)
		if err != nil {
			t.Errorf("%q: refused: %v", c.args, err)
			continue
		}
		if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, c.want) }) {
			t.Errorf("%q: warnings %q, want one containing %q", c.args, p.Warnings, c.want)
		}
	}
	p, err := planOf(t, "--pmc A --kernel-trace=false --stats=false")
	if err != nil || len(p.Warnings) != 0 {
		t.Errorf("false booleans: %v %q", err, p.Warnings)
	}
}

// PC sampling switched on in the environment is refused like the flag.
func TestPCSamplingEnvironment(t *testing.T) {
	cmd, err := ParseArgs(strings.Fields("--pmc A --replay-mode kernel --kernel-replay-beta-enabled -- s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cmd.Plan(func(k string) (string, bool) { return "", k == "ROCPROFILER_PC_SAMPLING_BETA_ENABLED" })
	if err == nil || !strings.Contains(err.Error(), "ROCPROFILER_PC_SAMPLING_BETA_ENABLED in the environment (PC sampling)") {
		t.Errorf("PC sampling from the environment: %v", err)
	}
}

// How runs and folders come out of command lines and input files,
// following rocprofv3.py's main.
func TestRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oneJob := write("one.yaml", "jobs:\n  - pmc_groups: [[SQ_WAVES, TCC_HIT], [TCC_MISS]]\n    replay_mode: kernel\n    kernel_replay_beta_enabled: true\n    kernel_include_regex: inc\n")
	twoJobs := write("two.json", `{"jobs": [{"pmc": ["SQ_WAVES"]}, {"pmc": ["TCC_HIT"], "kernel_trace": true}]}`)
	groupsJob := write("groups.yaml", "jobs:\n  - pmc: [[SQ_WAVES], [TCC_HIT]]\n    replay_mode: kernel\n    kernel_replay_beta_enabled: true\n")
	type run struct {
		dir    string
		groups int
		replay bool
	}
	cases := []struct {
		args string
		want []run
	}{
		{"--pmc A", []run{{"", 1, false}}},
		{"--pmc A --pmc B", []run{{"pass_1", 1, false}, {"pass_2", 1, false}}},
		{"--pmc A --pmc B --replay-mode kernel --kernel-replay-beta-enabled", []run{{"", 2, true}}},
		{"-i " + oneJob, []run{{"", 2, true}}}, // pmc_groups only: no pass folder (rocprofv3.py: pass_idx needs pmc)
		{"-i " + groupsJob, []run{{"pass_1", 2, true}}},
		{"-i " + twoJobs, []run{{"pass_1", 1, false}, {"pass_2", 1, false}}},
		{"--pmc A -i " + twoJobs, []run{{"pass_1", 1, false}, {"pass_2", 1, false}, {"pass_3", 1, false}}},
	}
	for _, c := range cases {
		p, err := planOf(t, c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		var got []run
		for _, r := range p.Runs {
			got = append(got, run{r.Dir, len(r.Groups), r.KernelReplay})
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: runs %+v, want %+v", c.args, got, c.want)
		}
	}
	p, err := planOf(t, "-i "+oneJob)
	if err != nil || p.Runs[0].Values.str("kernel_include_regex") != "inc" {
		t.Errorf("the job's filter: %v %+v", err, p)
	}
	p, err = planOf(t, "-i "+twoJobs)
	if err != nil || p.Runs[0].KernelTrace() || !p.Runs[1].KernelTrace() {
		t.Errorf("each job keeps its own settings: %v", err)
	}

	bad := []struct {
		body, name, want string
	}{
		{"jobs:\n  - pmc: [A]\n    kernel_trace: true\n", "conflict.yaml", `option "kernel_trace" has conflicting values`},
		{"jobs:\n  - hip_trace: true\n", "unknown.yaml", `key "hip_trace" is not an option`},
		{"jobs: []\n", "empty.yaml", "has no jobs"},
		{"pmc: A\n", "nojobs.txt", "text format"},
		{"{", "broken.json", "broken.json"},
		{"jobs:\n  - pmc: [A]\n    pmc_groups: [[B]]\n    replay_mode: kernel\n    kernel_replay_beta_enabled: true\n", "both.yaml", "cannot give both pmc and (input file) pmc_groups"},
		{"jobs:\n  - pmc_groups: [[A], [B]]\n", "rotation.yaml", "group rotation"},
	}
	for _, b := range bad {
		_, err := planOf(t, "--kernel-trace=false -i "+write(b.name, b.body))
		var d *Diagnostic
		if !errors.As(err, &d) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want a diagnostic containing %q", b.name, err, b.want)
		}
	}
}

func TestIterationRange(t *testing.T) {
	set, err := parseIterationRange("[1-3], 7 [9]")
	if err != nil || len(set) != 5 || !set[1] || !set[3] || !set[7] || !set[9] || set[4] {
		t.Errorf("parse: %v %v", set, err)
	}
	for _, bad := range []string{"3-1", "a", "1-2-3", "1-"} {
		if _, err := parseIterationRange(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
