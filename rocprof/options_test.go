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
		{"--log-level loud --", `--log-level: invalid choice "loud"`},
		{"--ompt-trace parallel,task --", "categories are space-separated"},
		{"--ompt-trace parallel nonsense --", "unknown category nonsense"},
		{"--perfetto-buffer-size 0 --", "must be between 1 and 4194303 KB"},
		{"-v=1 --", "-v takes no value"},
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
		{"--pmc A -f rocpd", "", "-f rocpd: replayspec prof writes only csv and json"},
		{"--pmc A -f pftrace otf2", "", "-f pftrace, otf2: replayspec prof writes only csv and json"},
		{"--pmc A B --pmc C -P 1:1:0", "", "several counter groups in separate runs (multiple --pmc options) cannot be combined with -P"},
		{"--pmc A B --pmc C --pid 3", "", "cannot be combined with --pid"},
		{"--pmc A -p 42 -P 1:1:0", "", "-P is not compatible with attach mode (-p)"},
		{"--pmc A --pc-sampling-beta-enabled --pc-sampling-method host_trap", "", "needs all three"},
		{"--pmc A --pc-sampling-beta-enabled --pc-sampling-method host_trap --pc-sampling-unit time --pc-sampling-interval 0", "", "must be a positive number"},
		{"--kernel-trace --spm SQ_WAVES", "", "add --spm-beta-enabled"},
		{"--pmc A --spm SQ_WAVES --spm-beta-enabled", "", "SPM cannot be combined with PC sampling or counter collection"},
		{"--kernel-trace --spm-beta-enabled --spm-sample-interval 4", "", "give them with --spm"},
		{"--pmc A --att --att-activity 8", "", "--att-activity cannot be combined with counter collection"},
		{"--pmc A --selected-regions -P 1:1:0", "", "--selected-regions and -P are mutually exclusive"},
		{"--pmc A --mpi-world-rank-variable R", "", "need both --mpi-world-rank-variable and --mpi-world-size-variable"},
		{"--stats", "", "no tracing option was enabled for --stats"},
		{"-S", "", "no tracing option was enabled for -S"},
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
		// Accepted, with one warning naming what is not produced.
		{"--pmc A -s", "-s: the kernel dispatch trace is written (as --kernel-trace); no HIP, HSA, marker"},
		{"--pmc A --sys-trace", "--sys-trace: the kernel dispatch trace is written"},
		{"--pmc A -r", "-r: the kernel dispatch trace is written"},
		{"--pmc A --hip-trace", "--hip-trace: no HIP API trace is written: the simulated application makes no HIP API calls"},
		{"--pmc A --hsa-core-trace", "--hsa-core-trace: no HSA core API trace is written"},
		{"--pmc A --ompt-trace parallel task", "--ompt-trace: no OpenMP (OMPT) API trace is written"},
		{"--pmc A --kfd-queue-trace", "no KFD event trace is written"},
		{"--pmc A --memory-copy-trace", "no memory copy trace is written"},
		{"--pmc A -S", "-S: no end-of-run summary is printed"},
		{"--pmc A -E extra.yaml", "-E: no extra counters are defined"},
		{"--pmc A --minimum-output-data 4", "every output file is written, whatever its size"},
		{"--pmc A --att", "--att: no thread trace is written"},
		{"--pmc A --att-no-intercept", "--att-no-intercept: no thread trace is written"},
		{"--pmc A --pc-sampling-beta-enabled", "no PC samples are written"},
		{"--kernel-trace --spm SQ_WAVES --spm-beta-enabled", "no SPM samples are written"},
		{"--pmc A -p 42", "-p: attach mode is not modelled"},
		{"--pmc A --selected-regions", "the whole run is profiled"},
		{"--pmc A -f csv rocpd", "-f rocpd: not produced; replayspec prof writes csv and json only"},
		{"--pmc A --benchmark-mode execution-profile", "no SDK overhead is measured"},
		{"--kernel-trace=false", "No tracing options were enabled"},
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
	// No spurious warnings: options that change nothing prof writes, and
	// plain runs, are silent.
	for _, args := range []string{
		"--pmc A --kernel-trace=false --stats=false",
		"--pmc A --pmc B", // no input file: no input job to skip
		"--pmc A --spm-beta-enabled",
		"--pmc A --log-level warning --group-by-queue --preload x.so --rocm-root /opt/rocm --perfetto-backend system",
		"--pmc A --profile-mpi-ranks 0-3 --mpi-world-rank-variable R --mpi-world-size-variable S --kernel-rename",
		"--pmc A --att-target-cu 1 --att-buffer-size 0x100 --disable-signal-handlers --process-sync --readlink",
		"--pmc A --hip-trace=false --sys-trace=no",
	} {
		p, err := planOf(t, args)
		if err != nil || len(p.Warnings) != 0 {
			t.Errorf("%q: %v, warnings %q, want none", args, err, p.Warnings)
		}
	}
	// One warning per option, however many runs it applies to.
	p, err := planOf(t, "--pmc A --pmc B --pmc C --hip-trace")
	if err != nil || len(p.Warnings) != 1 {
		t.Errorf("--hip-trace over three runs: %v, warnings %q, want one", err, p.Warnings)
	}
}

// -s and -r turn the kernel trace on unless it is given (rocprofv3.py's
// setattrifnone).
func TestSysTraceKernelTrace(t *testing.T) {
	for args, want := range map[string]bool{"--pmc A -s": true, "--pmc A -r": true, "--pmc A -s --kernel-trace=false": false, "--pmc A": false} {
		p, err := planOf(t, args)
		if err != nil || p.Runs[0].KernelTrace() != want {
			t.Errorf("%q: kernel trace %v, want %v (%v)", args, p != nil && p.Runs[0].KernelTrace(), want, err)
		}
	}
}

// Every option of rocprofv3's parser parses: none is an unknown option.
func TestEveryRocprofv3Option(t *testing.T) {
	for _, o := range optionTable {
		for _, name := range o.names {
			args := []string{name}
			switch o.arity {
			case optOne:
				val := "1"
				if len(o.choices) > 0 {
					val = o.choices[0]
				}
				args = append(args, val)
			case optSome:
				val := "1"
				if len(o.choices) > 0 {
					val = o.choices[0]
				}
				args = append(args, val)
			}
			if _, err := ParseArgs(append(args, "--", "s.yaml")); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if len(optionTable) < 100 {
		t.Errorf("%d options; rocprofv3's parser has over 100", len(optionTable))
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
		{"jobs: []\n", "empty.yaml", "has no jobs"},
		{"# nothing\n", "nojobs.txt", "has no jobs"},
		{"jobs:\n  - pmc: [A]\n", "in.xml", "does not have a recognized extension (.txt, .json, .yaml, .yml)"},
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

// The text format runs, with the reference's deprecation warning, each
// pmc: line one job in pmc_N; a key that is no option is ignored with a
// warning, as rocprofv3 ignores it.
func TestInputFileWarnings(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "pmc.txt")
	if err := os.WriteFile(txt, []byte("# groups\npmc: SQ_WAVES TCC_HIT  # first\n\npmc:\tGRBM_COUNT\nnot a job\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := planOf(t, "-i "+txt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Runs {
		got = append(got, r.Dir+":"+strings.Join(r.Groups[0], ","))
	}
	if want := []string{"pmc_1:SQ_WAVES,TCC_HIT", "pmc_2:GRBM_COUNT"}; !slices.Equal(got, want) {
		t.Errorf("text jobs %v, want %v", got, want)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "the text format for counter collection is deprecated") {
		t.Errorf("warnings %q, want the deprecation warning alone", p.Warnings)
	}
	p, err = planOf(t, "--pmc A -i "+txt)
	if err != nil || len(p.Runs) != 3 || p.Runs[0].Dir != "pass_1" || p.Runs[1].Dir != "pmc_2" {
		t.Errorf("--pmc with a text file: %v %+v", err, p)
	}
	yml := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(yml, []byte("jobs:\n  - pmc: [SQ_WAVES]\n    kernal_trace: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = planOf(t, "-i "+yml)
	if err != nil || len(p.Runs) != 1 || p.Runs[0].Dir != "pass_1" {
		t.Fatalf("an unknown key is not fatal: %v", err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `job 1: key "kernal_trace" is not a rocprofv3 option and is ignored`) {
		t.Errorf("warnings %q", p.Warnings)
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
