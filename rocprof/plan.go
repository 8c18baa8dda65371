package rocprof

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Diagnostic is a refused combination of options, input or counters: what
// is wrong, in words, and the rule that says so (empty when no rule does).
// rocprofv3 prints these as fatal errors and exits with status 1.
type Diagnostic struct {
	Rule string
	Msg  string
}

func (d *Diagnostic) Error() string {
	if d.Rule == "" {
		return d.Msg
	}
	return d.Msg + " (" + d.Rule + ")"
}

// Config is how one run of the application is profiled: the command line
// merged with an input file's job, as rocprofv3.py's get_args merges them.
type Config struct {
	Values Values
	// Groups are the counter groups as the tool library reads them: each a
	// set, so sorted and without repeats (config.cpp parse_counters).
	Groups       [][]string
	KernelReplay bool
	// Dir is the sub-directory of the output directory the run writes to:
	// "" or pass_N (application replay, or an input-file job).
	Dir string
	// Number is N of pass_N, 0 for a run at the top.
	Number int
}

// Plan is what a command line asks for: the runs of the application, in
// order, and the warnings to print before they start.
type Plan struct {
	Runs     []Config
	Warnings []string
}

// Env looks up an environment variable (os.LookupEnv); prof reads the one
// switch rocprofv3 reads that changes a refusal.
type Env func(string) (string, bool)

// pcSamplingEnv is the environment switch that turns PC sampling on
// without the command-line flag (rocprofv3.py reads it too).
const pcSamplingEnv = "ROCPROFILER_PC_SAMPLING_BETA_ENABLED"

// Plan reads the input file (if any), splits the work into runs as
// rocprofv3.py's main does, and applies rocprofv3's rules for combining
// options to every run. Refusals come back as errors.Join of *Diagnostic.
func (c *Command) Plan(env Env) (*Plan, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	jobs := []Values{{}}
	fromInput := c.Values.has("input")
	var inputWarnings []string
	if fromInput {
		var err error
		if jobs, inputWarnings, err = readInput(c.Values.str("input")); err != nil {
			return &Plan{Warnings: inputWarnings}, err
		}
	}
	var errs []error
	for i, g := range c.Values["pmc"].Groups {
		if len(g) == 0 {
			errs = append(errs, &Diagnostic{Msg: fmt.Sprintf("--pmc occurrence %d names no counter: each --pmc is one counter group and needs at least one counter", i+1)})
		}
	}
	if source := multipassSource(c.Values, jobs, fromInput); source != "" {
		for _, dest := range []string{"pid", "collection_period"} {
			given := c.Values.has(dest)
			for _, j := range jobs {
				given = given || j.has(dest)
			}
			if given {
				errs = append(errs, &Diagnostic{Msg: fmt.Sprintf("several counter groups in separate runs (%s) cannot be combined with %s: the runs cannot share one %s",
					source, c.Values.from(dest), map[string]string{"pid": "attached process", "collection_period": "collection window"}[dest])})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	runs, warnings, err := splitRuns(c.Values, jobs, fromInput)
	if err != nil {
		return nil, err
	}
	p := &Plan{Warnings: append(inputWarnings, warnings...)}
	for i := range runs {
		ws, err := runs[i].check(env)
		for _, w := range ws {
			if !slices.Contains(p.Warnings, w) {
				p.Warnings = append(p.Warnings, w)
			}
		}
		if err != nil {
			if len(runs) > 1 && runs[i].Dir != "" {
				err = prefixed(runs[i].Dir+": ", err)
			}
			errs = append(errs, err)
		}
	}
	p.Runs = runs
	return p, errors.Join(errs...)
}

func prefixed(prefix string, err error) error {
	var out []error
	for _, e := range flatten(err) {
		var d *Diagnostic
		if errors.As(e, &d) {
			out = append(out, &Diagnostic{Rule: d.Rule, Msg: prefix + d.Msg})
		} else {
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

// flatten lists the errors of an errors.Join, or err itself.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// Errors lists the errors of an errors.Join, or err itself.
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	return flatten(err)
}

// multipassSource says why the command line asks for application replay's
// several runs, or "" (rocprofv3.py multipass_source).
func multipassSource(cli Values, jobs []Values, fromInput bool) string {
	withPMC := 0
	for _, j := range jobs {
		if j.has("pmc") {
			withPMC++
		}
	}
	switch {
	case len(cli["pmc"].Groups) > 1 && cli.str("replay_mode") != "kernel":
		return "multiple --pmc options"
	case fromInput && withPMC > 1:
		return "multiple input-file jobs"
	case fromInput && cli.has("pmc") && withPMC > 0:
		return "--pmc combined with input-file pmc"
	}
	return ""
}

// splitRuns is rocprofv3.py's main: one run, or application replay's
// several (one per --pmc group, then one per input-file job with pmc).
func splitRuns(cli Values, jobs []Values, fromInput bool) ([]Config, []string, error) {
	var warnings []string
	cliGroups := cli["pmc"].Groups
	cliHasPMC := cli.has("pmc")
	replayCLI := cli.str("replay_mode") == "kernel"
	inputHasPMC := fromInput && jobs[0].has("pmc")
	// Kernel replay keeps every command-line group inside one run.
	cliMultipass := len(cliGroups) > 1 && !replayCLI
	multipass := cliMultipass || len(jobs) > 1 || (cliHasPMC && inputHasPMC)

	if !multipass {
		v, err := merge(cli, jobs[0])
		if err != nil {
			return nil, nil, err
		}
		cfg := newConfig(v)
		if fromInput && len(cfg.Groups) > 0 && v.has("pmc") {
			cfg.Dir, cfg.Number = subOf(v)+"1", 1
		}
		return []Config{cfg}, nil, nil
	}
	var runs []Config
	base := cloneValues(cli)
	delete(base, "pmc")
	baseMerged, err := merge(base, jobs[0])
	if err != nil {
		return nil, nil, err
	}
	add := func(v Values) {
		cfg := newConfig(v)
		cfg.Number = len(runs) + 1
		cfg.Dir = subOf(v) + strconv.Itoa(cfg.Number)
		runs = append(runs, cfg)
	}
	if cliHasPMC {
		switch {
		case len(cliGroups) == 1 || replayCLI:
			v := cloneValues(baseMerged)
			v["pmc"] = cli["pmc"]
			delete(v, subDirectory) // command-line passes go to pass_N
			add(v)
		default:
			for _, g := range cliGroups {
				v := cloneValues(baseMerged)
				v["pmc"] = value{Groups: [][]string{g}, From: "--pmc"}
				delete(v, subDirectory)
				add(v)
			}
		}
	}
	for k, job := range jobs {
		if !job.has("pmc") {
			if fromInput { // the job the command line alone makes is no input job
				warnings = append(warnings, fmt.Sprintf("input job %d has no pmc and is skipped, as rocprofv3 skips it when it runs several passes", k+1))
			}
			continue
		}
		v, err := merge(base, job)
		if err != nil {
			return nil, nil, err
		}
		add(v)
	}
	return runs, warnings, nil
}

// subOf is the folder prefix of a run: its job's, pass_ otherwise.
func subOf(v Values) string {
	if s := v.str(subDirectory); s != "" {
		return s
	}
	return "pass_"
}

func cloneValues(v Values) Values {
	out := make(Values, len(v))
	for k, x := range v {
		out[k] = x
	}
	return out
}

// merge combines the command line with an input-file job; the command line
// wins, and an option both give differently is refused (get_args).
func merge(cli, job Values) (Values, error) {
	out := cloneValues(job)
	var errs []error
	keys := make([]string, 0, len(cli))
	for k := range cli {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if j, ok := job[k]; ok && !j.equal(cli[k]) {
			errs = append(errs, &Diagnostic{Msg: fmt.Sprintf("option %q has conflicting values on the command line (%s) and in the input file (%s): give it in one place",
				k, describe(cli[k]), describe(j))})
			continue
		}
		out[k] = cli[k]
	}
	return out, errors.Join(errs...)
}

func describe(v value) string {
	switch {
	case v.Groups != nil:
		var gs []string
		for _, g := range v.Groups {
			gs = append(gs, "["+strings.Join(g, " ")+"]")
		}
		return strings.Join(gs, " ")
	case v.List != nil:
		return strings.Join(v.List, " ")
	case v.Str != "":
		return v.Str
	}
	return strconv.FormatBool(v.Bool)
}

// newConfig derives the counter groups and the replay mode.
func newConfig(v Values) Config {
	cfg := Config{Values: v, KernelReplay: v.str("replay_mode") == "kernel"}
	groups := v["pmc"].Groups
	if v.has("pmc_groups") {
		groups = append(groups, v["pmc_groups"].Groups...)
	}
	for _, g := range groups {
		cfg.Groups = append(cfg.Groups, counterSet(g))
	}
	return cfg
}

// counterSet is a group as a set: sorted, no repeats.
func counterSet(g []string) []string {
	s := slices.Clone(g)
	slices.Sort(s)
	return slices.Compact(s)
}

// check applies rocprofv3's rules for combining options to one run. It
// returns the warnings to print when the run is allowed, and every refusal
// otherwise.
func (cfg *Config) check(env Env) (warnings []string, err error) {
	v := cfg.Values
	var errs []error
	refuse := func(rule, format string, args ...any) {
		errs = append(errs, &Diagnostic{Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	if v["pmc"].From != "--pmc" { // the command line's groups are checked before the runs are split
		for i, g := range v["pmc"].Groups {
			if len(g) == 0 {
				refuse("", "pmc group %d of the input file names no counter", i+1)
			}
		}
	}
	for i, g := range v["pmc_groups"].Groups {
		if len(g) == 0 {
			refuse("", "pmc_groups entry %d of the input file names no counter", i+1)
		}
	}
	if v.has("pmc") && v.has("pmc_groups") {
		refuse("", "cannot give both pmc and (input file) pmc_groups: put every counter group in one of them")
	}
	cfg.checkFormats(refuse, warn)
	pcAll := v.has("pc_sampling_unit") && v.has("pc_sampling_method") && v.has("pc_sampling_interval")
	_, pcEnv := env(pcSamplingEnv)
	_, spmEnv := env(spmEnv)
	pcOn := v.on("pc_sampling_beta_enabled") || pcEnv
	pcSettings := v.has("pc_sampling_unit") || v.has("pc_sampling_method") || v.has("pc_sampling_interval")
	spmOn := v.has("spm") || v.has("spm_sample_interval") || v.has("spm_sample_interval_unit")
	attOn := v.on("advanced_thread_trace") || v.on("att_no_intercept") // rocprofv3.py turns thread trace on for both
	if pcSettings {                                                    // rocprofv3.py run checks these after the kernel replay conflicts, whatever the mode
		switch {
		case !pcOn:
			refuse("", "PC sampling is not enabled: --pc-sampling-unit, --pc-sampling-method and --pc-sampling-interval need --pc-sampling-beta-enabled (or %s in the environment)", pcSamplingEnv)
		case !pcAll:
			refuse("", "PC sampling needs all three of --pc-sampling-unit, --pc-sampling-method and --pc-sampling-interval")
		case intOf(v.str("pc_sampling_interval")) <= 0:
			refuse("", "--pc-sampling-interval must be a positive number")
		}
	}
	if cfg.KernelReplay {
		if !v.on("kernel_replay_beta_enabled") {
			refuse("RPV-1", "--replay-mode kernel is experimental: add --kernel-replay-beta-enabled to acknowledge it")
		}
		if len(cfg.Groups) == 0 {
			refuse("RPV-1", "--replay-mode kernel needs counters: give at least one --pmc group (or an input file's pmc / pmc_groups); kernel replay replays each dispatch once per counter group and collects nothing else")
		}
		why := "kernel replay varies only the counter group from pass to pass, so %s would stay on in every pass and report each kernel once per pass under one dispatch id; collect it in a separate run"
		if attOn {
			flag := v.from("att_no_intercept")
			if v.on("advanced_thread_trace") {
				flag = v.from("advanced_thread_trace")
			}
			refuse("RPV-7", "--replay-mode kernel cannot be combined with %s (thread trace): "+why, flag, "thread trace")
		}
		if pcOn {
			flag := "--pc-sampling-beta-enabled"
			if !v.on("pc_sampling_beta_enabled") {
				flag = pcSamplingEnv + " in the environment"
			}
			refuse("RPV-7", "--replay-mode kernel cannot be combined with %s (PC sampling): "+why, flag, "PC sampling")
		}
		if spmOn {
			flag := "--spm"
			for _, d := range []string{"spm", "spm_sample_interval", "spm_sample_interval_unit"} {
				if v.has(d) {
					flag = v.from(d)
					break
				}
			}
			refuse("RPV-7", "--replay-mode kernel cannot be combined with %s (SPM): "+why, flag, "SPM")
		}
		if cfg.KernelTrace() {
			warn("%s with --replay-mode kernel: a replayed dispatch is traced once per pass, so the kernel trace holds one record per pass with the same dispatch id", cfg.kernelTraceFlag())
			if v.on("stats") {
				warn("--stats with --replay-mode kernel: every pass of a replayed dispatch counts as a call, so calls and total durations are multiplied by the pass count")
			}
		}
	} else {
		if v.on("kernel_replay_beta_enabled") {
			warn("--kernel-replay-beta-enabled has no effect without --replay-mode kernel")
		}
		if attOn {
			for _, d := range []string{"att_perfcounters", "att_perfcounter_ctrl", "att_activity"} {
				if v.has(d) && len(cfg.Groups) > 0 {
					refuse("", "%s cannot be combined with counter collection (--pmc): thread trace's own counters and dispatch counters share the hardware", v.from(d))
				}
			}
			if v.has("att_activity") && (v.has("att_perfcounters") || v.has("att_perfcounter_ctrl")) {
				refuse("", "--att-activity cannot be combined with --att-perfcounters or --att-perfcounter-ctrl")
			}
			warn("%s: no thread trace is written: the simulator has no shader instruction stream to trace", v.fromAny("advanced_thread_trace", "att_no_intercept"))
		}
		if v.has("pmc_groups") || len(v["pmc"].Groups) > 1 {
			refuse("", "several counter groups in one run without --replay-mode kernel select rocprofv3's group rotation across dispatches, which replayspec prof does not model: give them as separate --pmc options (one run each) or use kernel replay")
		}
		if pcOn && len(errs) == 0 && !(pcSettings && !pcAll) {
			warn("%s: no PC samples are written: the simulator does not sample program counters", v.fromAny("pc_sampling_beta_enabled", "pc_sampling_method"))
		}
		if spmOn {
			switch {
			case !v.on("spm_beta_enabled") && !spmEnv:
				refuse("", "SPM is a beta feature and is off: add --spm-beta-enabled to use --spm")
			case len(cfg.Groups) > 0 || pcOn:
				refuse("", "SPM cannot be combined with PC sampling or counter collection (--pmc): collect them in separate runs")
			case !v.has("spm"):
				refuse("", "--spm-sample-interval and --spm-sample-interval-unit need the counters to sample: give them with --spm")
			default:
				warn("--spm: no SPM samples are written: the simulator does not stream counters")
			}
		}
	}
	for _, d := range []string{"sys_trace", "runtime_trace"} {
		if v.on(d) {
			warn("%s: the kernel dispatch trace is written (as --kernel-trace); no HIP, HSA, marker or other API trace and no memory copy, allocation, scratch or KFD trace: the simulated application makes no runtime API calls", v.from(d))
		}
	}
	if v.has("pid") {
		warn("%s: attach mode is not modelled: replayspec prof launches the spec's application itself", v.from("pid"))
		if v.has("collection_period") {
			refuse("", "%s is not compatible with attach mode (%s)", v.from("collection_period"), v.from("pid"))
		}
	}
	if v.on("selected_regions") {
		switch {
		case v.has("collection_period"):
			refuse("", "--selected-regions and %s are mutually exclusive", v.from("collection_period"))
		case v.has("att_consecutive_kernels"):
			refuse("", "--selected-regions and --att-consecutive-kernels are mutually exclusive")
		default:
			warn("--selected-regions: the simulated application has no roctxProfilerResume/Pause calls, so the whole run is profiled")
		}
	}
	if v.has("collection_period") && !v.has("pid") && !v.on("selected_regions") {
		warn("%s is ignored: the simulated application is profiled from start to end", v.from("collection_period"))
	}
	if v.has("mpi_world_rank_variable") != v.has("mpi_world_size_variable") {
		refuse("", "custom MPI environment variables need both --mpi-world-rank-variable and --mpi-world-size-variable")
	}
	// Options that ask for what the simulator cannot produce: one warning each.
	for _, o := range optionTable {
		if o.effect == notProduced && v.given(o) {
			warn("%s: %s", v.from(o.dest), o.what)
		}
	}
	if len(cfg.Groups) == 0 && !cfg.KernelTrace() && !cfg.anyTracing() {
		warn("No tracing options were enabled: give --pmc or --kernel-trace")
		for _, d := range []string{"stats", "summary", "summary_per_domain", "summary_groups", "summary_output_file", "summary_units"} {
			if o, _ := optionByDest(d); v.given(o) {
				refuse("", "no tracing option was enabled for %s: it summarises traced data (add --kernel-trace)", v.from(d))
			}
		}
	} else if v.on("stats") && !cfg.KernelTrace() {
		warn("--stats summarises traced domains only, and no domain is traced: add --kernel-trace for kernel_stats.csv")
	}
	for _, d := range []string{"kernel_include_regex", "kernel_exclude_regex"} {
		if v.has(d) {
			if _, err := regexp.Compile(v.str(d)); err != nil {
				refuse("", "%s %q is not a regular expression: %v", v.from(d), v.str(d), err)
			}
		}
	}
	if v.has("kernel_iteration_range") {
		if _, err := parseIterationRange(strings.Join(v.list("kernel_iteration_range"), ", ")); err != nil {
			refuse("", "%s: %v", v.from("kernel_iteration_range"), err)
		}
	}
	return warnings, errors.Join(errs...)
}

// spmEnv turns SPM on without the flag (rocprofv3.py reads it).
const spmEnv = "ROCPROFILER_SPM_BETA_ENABLED"

// checkFormats: prof writes csv and json; the other formats are named in
// a warning, and a run that would write nothing is refused.
func (cfg *Config) checkFormats(refuse func(rule, format string, args ...any), warn func(format string, args ...any)) {
	fs := cfg.Values.list("output_format")
	var other []string
	for _, f := range fs {
		if f != "csv" && f != "json" && !slices.Contains(other, f) {
			other = append(other, f)
		}
	}
	if len(other) == 0 {
		return
	}
	what := strings.Join(other, ", ")
	if len(other) == len(slices.Compact(slices.Sorted(slices.Values(fs)))) {
		refuse("", "%s %s: replayspec prof writes only csv and json (rocprofv3's rocpd database, Perfetto and OTF2 traces are not produced): add -f csv and/or json", cfg.Values.from("output_format"), what)
		return
	}
	warn("%s %s: not produced; replayspec prof writes csv and json only", cfg.Values.from("output_format"), what)
}

// anyTracing reports whether an option asks for a trace prof does not
// produce: rocprofv3 counts it as tracing, so it does not say that nothing
// was enabled.
func (cfg *Config) anyTracing() bool {
	v := cfg.Values
	for _, o := range optionTable {
		if strings.HasSuffix(o.dest, "_trace") && v.given(o) && (o.arity != optBool || v.on(o.dest)) {
			return true
		}
	}
	return v.on("advanced_thread_trace") || v.on("att_no_intercept") || v.on("pc_sampling_beta_enabled") || v.has("spm")
}

func (cfg *Config) kernelTraceFlag() string {
	if cfg.Values.has("kernel_trace") {
		return cfg.Values.from("kernel_trace")
	}
	return cfg.Values.fromAny("sys_trace", "runtime_trace")
}

func intOf(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// parseIterationRange reads --kernel-iteration-range as the tool library
// does (kernel_filter_range.cpp): tokens separated by "[", "]", "," and
// spaces, each a launch number or an inclusive range A-B. Launches are
// counted per kernel from 1.
func parseIterationRange(s string) (map[uint64]bool, error) {
	set := map[uint64]bool{}
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == '[' || r == ']' || r == ',' || r == ' ' }) {
		if a, b, ok := strings.Cut(tok, "-"); ok {
			lo, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
			hi, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
			if err1 != nil || err2 != nil || strings.Contains(b, "-") {
				return nil, fmt.Errorf("bad range %q: expected A-B where A and B are numbers", tok)
			}
			if hi < lo || hi-lo > 1<<20 {
				return nil, fmt.Errorf("bad range %q: expected A-B with A <= B (and at most 2^20 launches)", tok)
			}
			for i := lo; i <= hi; i++ {
				set[i] = true
			}
			continue
		}
		n, err := strconv.ParseUint(tok, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("expected an integer, not %q", tok)
		}
		set[n] = true
	}
	return set, nil
}

// readInput reads an input file's jobs (rocprofv3.py parse_input):
// {"jobs": [{...}, ...]} in JSON or YAML, each job's keys the options'
// argparse names (kernel_trace, pmc, pmc_groups, replay_mode, ...), run in
// pass_N; or the deprecated text format, one job per "pmc:" line, run in
// pmc_N. Keys that are no rocprofv3 option are ignored with a warning, as
// rocprofv3 ignores them.
func readInput(path string) (jobs []Values, warnings []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &Diagnostic{Msg: fmt.Sprintf("input file: %v", err)}
	}
	var doc struct {
		Jobs []map[string]any `json:"jobs" yaml:"jobs"`
	}
	sub := "pass_"
	switch ext := filepath.Ext(path); ext {
	case ".json":
		err = json.Unmarshal(data, &doc)
	case ".yaml", ".yml":
		err = yaml.Unmarshal(data, &doc)
	case ".txt", ".text":
		warnings = append(warnings, fmt.Sprintf("input file %s: the text format for counter collection is deprecated in rocprofv3 and will be removed; write {\"jobs\": [{\"pmc\": [...]}, ...]} as JSON or YAML instead", path))
		doc.Jobs, sub = textJobs(data), "pmc_"
	default:
		return nil, warnings, &Diagnostic{Msg: fmt.Sprintf("input file %s does not have a recognized extension (.txt, .json, .yaml, .yml)", path)}
	}
	if err != nil {
		return nil, warnings, &Diagnostic{Msg: fmt.Sprintf("input file %s: %v", path, err)}
	}
	if len(doc.Jobs) == 0 {
		return nil, warnings, &Diagnostic{Msg: fmt.Sprintf("input file %s has no jobs: write {\"jobs\": [{\"pmc\": [...]}]}", path)}
	}
	var errs []error
	for k, raw := range doc.Jobs {
		v, ignored, err := jobValues(raw)
		if err != nil {
			errs = append(errs, &Diagnostic{Msg: fmt.Sprintf("input file %s, job %d: %v", path, k+1, err)})
		}
		for _, key := range ignored {
			warnings = append(warnings, fmt.Sprintf("input file %s, job %d: key %q is not a rocprofv3 option and is ignored (keys are the options' names with underscores: pmc, pmc_groups, replay_mode, kernel_trace, ...)", path, k+1, key))
		}
		v[subDirectory] = value{Str: sub}
		jobs = append(jobs, v)
	}
	return jobs, warnings, errors.Join(errs...)
}

// subDirectory is where an input-file job's runs go: pass_N, or pmc_N for
// the text format (rocprofv3.py's sub_directory).
const subDirectory = "sub_directory"

// textJobs reads the text format as rocprofv3.py's parse_text does: a
// comment runs from # to the end of the line, a line without "pmc:" is
// skipped, and each "pmc:" line is one job, its counters separated by
// blanks.
func textJobs(data []byte) []map[string]any {
	var jobs []map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if !strings.Contains(line, "pmc:") {
			continue
		}
		var counters []any
		for _, c := range strings.Fields(strings.ReplaceAll(line, "pmc:", " ")) {
			counters = append(counters, c)
		}
		if len(counters) > 0 {
			jobs = append(jobs, map[string]any{"pmc": counters})
		}
	}
	return jobs
}

// jobValues converts one job's keys into option values; ignored lists the
// keys that are no rocprofv3 option.
func jobValues(raw map[string]any) (v Values, ignored []string, err error) {
	v = Values{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		o, ok := optionByDest(k)
		if !ok || k == "input" || k == subDirectory {
			ignored = append(ignored, k)
			continue
		}
		x, err := jobValue(o, raw[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %v", k, err))
			continue
		}
		x.From = k
		if err := checkValue(o, k, &x); err != nil {
			errs = append(errs, err)
			continue
		}
		v[k] = x
	}
	return v, ignored, errors.Join(errs...)
}

func jobValue(o option, x any) (value, error) {
	words := func(x any) ([]string, error) {
		switch t := x.(type) {
		case string:
			return strings.Fields(t), nil
		case []any:
			var out []string
			for _, e := range t {
				s, ok := scalar(e)
				if !ok {
					return nil, fmt.Errorf("expected a list of names, found %v", e)
				}
				out = append(out, s)
			}
			return out, nil
		}
		if s, ok := scalar(x); ok {
			return []string{s}, nil
		}
		return nil, fmt.Errorf("expected a name or a list of names, found %v", x)
	}
	switch o.arity {
	case optBool:
		switch t := x.(type) {
		case bool:
			return value{Bool: t}, nil
		case string:
			b, err := parseBool(t)
			return value{Bool: b}, err
		}
		return value{}, fmt.Errorf("expected true or false, found %v", x)
	case optOne:
		s, ok := scalar(x)
		if !ok {
			return value{}, fmt.Errorf("expected one value, found %v", x)
		}
		return value{Str: s}, nil
	case optSome, optMany:
		ws, err := words(x)
		return value{List: ws}, err
	default: // optGroups: a list of names is one group; a list of lists, several
		list, isList := x.([]any)
		nested := isList && len(list) > 0
		for _, e := range list {
			if _, ok := e.([]any); !ok {
				nested = false
			}
		}
		if o.dest == "pmc_groups" && isList && !nested {
			// pmc_groups: each entry one group, written "A B" or [A, B].
			var gs [][]string
			for _, e := range list {
				ws, err := words(e)
				if err != nil {
					return value{}, err
				}
				gs = append(gs, counterWords(ws))
			}
			return value{Groups: gs}, nil
		}
		if nested {
			var gs [][]string
			for _, e := range list {
				ws, err := words(e)
				if err != nil {
					return value{}, err
				}
				gs = append(gs, counterWords(ws))
			}
			return value{Groups: gs}, nil
		}
		ws, err := words(x)
		return value{Groups: [][]string{counterWords(ws)}}, err
	}
}

func scalar(x any) (string, bool) {
	switch t := x.(type) {
	case string:
		return t, true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// Accessors of a run's settings, with rocprofv3's defaults.

// KernelTrace reports --kernel-trace, or -s/-r, which turn it on unless
// it is given (rocprofv3.py run: setattrifnone).
func (cfg Config) KernelTrace() bool {
	v := cfg.Values
	if v.has("kernel_trace") {
		return v.on("kernel_trace")
	}
	return v.on("sys_trace") || v.on("runtime_trace")
}

// Stats reports --stats.
func (cfg Config) Stats() bool { return cfg.Values.on("stats") }

// Formats returns the output formats. rocprofv3's default is rocpd, a
// database prof does not write; without -f prof writes csv and json.
func (cfg Config) Formats() []string {
	if fs := cfg.Values.list("output_format"); len(fs) > 0 {
		return fs
	}
	return []string{"csv", "json"}
}

// Format reports whether the run writes format f.
func (cfg Config) Format(f string) bool { return slices.Contains(cfg.Formats(), f) }

// AgentIndex is -A: absolute, relative (the default) or type-relative.
func (cfg Config) AgentIndex() string {
	if a := cfg.Values.str("agent_index"); a != "" {
		return a
	}
	return "relative"
}
