package rocprof

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The command-line grammar of rocprofv3 (source/bin/rocprofv3.py,
// parse_arguments): every option's names, short forms, how many values it
// takes, its choices, and what prof does with it. No real rocprofv3 option
// is an "unknown option": prof honours it, applies rocprofv3's rules to it,
// or accepts it with a warning naming what the simulator cannot produce.

// arity is how many values an option takes, in argparse's terms.
type arity int

const (
	optBool   arity = iota // nargs="?", const=True: --x, --x=BOOL, --x BOOL
	optFlag                // action="store_true": no value (-v)
	optOne                 // exactly one value
	optSome                // nargs="+": one or more
	optMany                // nargs="*": zero or more
	optGroups              // nargs="*" with action="append": one group per occurrence (--pmc)
)

// effect is what prof does with an option rocprofv3 accepts.
type effect int

const (
	// honoured: prof does what rocprofv3 does with it.
	honoured effect = iota
	// noOutput: the option changes nothing prof writes (where rocprofv3
	// finds its libraries, MPI rank selection in a run of one process,
	// Perfetto settings without Perfetto output): accepted silently.
	noOutput
	// notProduced: it asks for something the simulator cannot produce;
	// accepted with one warning naming what is not written.
	notProduced
	// ruled: Plan's rules decide (RPV-1, RPV-7, rocprofv3's own refusals),
	// and a warning names what is not produced where it is accepted.
	ruled
)

// option is one row of the grammar.
type option struct {
	names   []string // spellings, short first
	dest    string   // the key an input file uses for it (argparse's dest)
	arity   arity
	choices []string // allowed values, after lower-casing when lower is set
	lower   bool     // values are lower-cased first (argparse type=str.lower)
	integer bool     // the value must be an integer (type=int)
	effect  effect
	what    string // notProduced: what is not written
}

// optionTable lists every option of rocprofv3's parser, in rocprofv3.py's
// order (parse_arguments), with what prof does with it.
var optionTable = []option{
	{names: []string{"-v", "--version"}, dest: "version", arity: optFlag},
	{names: []string{"-i", "--input"}, dest: "input", arity: optOne},
	{names: []string{"-o", "--output-file"}, dest: "output_file", arity: optOne},
	{names: []string{"-d", "--output-directory"}, dest: "output_directory", arity: optOne},
	{names: []string{"-f", "--output-format"}, dest: "output_format", arity: optSome, lower: true,
		choices: []string{"csv", "json", "pftrace", "otf2", "rocpd"}, effect: ruled},
	{names: []string{"--output-config"}, dest: "output_config", arity: optBool},
	{names: []string{"--log-level"}, dest: "log_level", arity: optOne, lower: true,
		choices: []string{"fatal", "error", "warning", "info", "trace", "env", "config"}},
	{names: []string{"-E", "--extra-counters"}, dest: "extra_counters", arity: optOne, effect: notProduced,
		what: "no extra counters are defined: the simulated agents have a fixed counter set"},
	{names: []string{"-r", "--runtime-trace"}, dest: "runtime_trace", arity: optBool, effect: ruled},
	{names: []string{"-s", "--sys-trace"}, dest: "sys_trace", arity: optBool, effect: ruled},
	{names: []string{"--hip-trace"}, dest: "hip_trace", arity: optBool, effect: notProduced, what: apiTrace("HIP")},
	{names: []string{"--marker-trace"}, dest: "marker_trace", arity: optBool, effect: notProduced, what: apiTrace("marker (ROCTx)")},
	{names: []string{"--kernel-trace"}, dest: "kernel_trace", arity: optBool},
	{names: []string{"--hip-graph-trace"}, dest: "hip_graph_trace", arity: optBool, effect: notProduced,
		what: "no hip_graph records are written: the simulated application launches graphs without a HIP runtime"},
	{names: []string{"--hip-event-trace"}, dest: "hip_event_trace", arity: optBool, effect: notProduced, what: "no HIP event records are written: the simulated application has no HIP runtime"},
	{names: []string{"--memory-copy-trace"}, dest: "memory_copy_trace", arity: optBool, effect: notProduced, what: "no memory copy trace is written: the simulated application's copies are not traced"},
	{names: []string{"--memory-allocation-trace"}, dest: "memory_allocation_trace", arity: optBool, effect: notProduced, what: "no memory allocation trace is written: the simulated application's allocations are not traced"},
	{names: []string{"--kfd-trace"}, dest: "kfd_trace", arity: optBool, effect: notProduced, what: kfdTrace},
	{names: []string{"--scratch-memory-trace"}, dest: "scratch_memory_trace", arity: optBool, effect: notProduced, what: "no scratch memory trace is written: the simulated kernels use no scratch"},
	{names: []string{"--hsa-trace"}, dest: "hsa_trace", arity: optBool, effect: notProduced, what: apiTrace("HSA")},
	{names: []string{"--rccl-trace"}, dest: "rccl_trace", arity: optBool, effect: notProduced, what: apiTrace("RCCL")},
	{names: []string{"--ompt-trace"}, dest: "ompt_trace", arity: optMany, effect: notProduced, what: apiTrace("OpenMP (OMPT)")},
	{names: []string{"--kokkos-trace"}, dest: "kokkos_trace", arity: optBool, effect: notProduced, what: apiTrace("Kokkos")},
	{names: []string{"--rocdecode-trace"}, dest: "rocdecode_trace", arity: optBool, effect: notProduced, what: apiTrace("rocDecode")},
	{names: []string{"--rocjpeg-trace"}, dest: "rocjpeg_trace", arity: optBool, effect: notProduced, what: apiTrace("rocJPEG")},
	{names: []string{"--rocshmem-trace"}, dest: "rocshmem_trace", arity: optBool, effect: notProduced, what: apiTrace("rocSHMEM")},
	{names: []string{"--hipfile-trace"}, dest: "hipfile_trace", arity: optBool, effect: notProduced, what: apiTrace("hipFILE")},
	{names: []string{"--hip-runtime-trace"}, dest: "hip_runtime_trace", arity: optBool, effect: notProduced, what: apiTrace("HIP runtime")},
	{names: []string{"--hip-compiler-trace"}, dest: "hip_compiler_trace", arity: optBool, effect: notProduced, what: apiTrace("HIP compiler")},
	{names: []string{"--hsa-core-trace"}, dest: "hsa_core_trace", arity: optBool, effect: notProduced, what: apiTrace("HSA core")},
	{names: []string{"--hsa-amd-trace"}, dest: "hsa_amd_trace", arity: optBool, effect: notProduced, what: apiTrace("HSA AMD extension")},
	{names: []string{"--hsa-image-trace"}, dest: "hsa_image_trace", arity: optBool, effect: notProduced, what: apiTrace("HSA image extension")},
	{names: []string{"--hsa-finalizer-trace"}, dest: "hsa_finalizer_trace", arity: optBool, effect: notProduced, what: apiTrace("HSA finalizer extension")},
	{names: []string{"--kfd-page-migration-trace"}, dest: "kfd_page_migration_trace", arity: optBool, effect: notProduced, what: kfdTrace},
	{names: []string{"--kfd-page-mapping-trace"}, dest: "kfd_page_mapping_trace", arity: optBool, effect: notProduced, what: kfdTrace},
	{names: []string{"--kfd-queue-trace"}, dest: "kfd_queue_trace", arity: optBool, effect: notProduced, what: kfdTrace},
	{names: []string{"--kfd-dropped-events-trace"}, dest: "kfd_dropped_events_trace", arity: optBool, effect: notProduced, what: kfdTrace},
	{names: []string{"--pmc"}, dest: "pmc", arity: optGroups},
	{names: []string{"--replay-mode"}, dest: "replay_mode", arity: optOne, choices: []string{"kernel", "application"}},
	{names: []string{"--kernel-replay-beta-enabled"}, dest: "kernel_replay_beta_enabled", arity: optBool},
	{names: []string{"--spm-beta-enabled"}, dest: "spm_beta_enabled", arity: optBool, effect: ruled},
	{names: []string{"--spm"}, dest: "spm", arity: optMany, effect: ruled},
	{names: []string{"--spm-sample-interval"}, dest: "spm_sample_interval", arity: optOne, integer: true, effect: ruled},
	{names: []string{"--spm-sample-interval-unit"}, dest: "spm_sample_interval_unit", arity: optOne, lower: true,
		choices: []string{"sclk_cycles"}, effect: ruled},
	{names: []string{"--pc-sampling-beta-enabled"}, dest: "pc_sampling_beta_enabled", arity: optBool, effect: ruled},
	{names: []string{"--pc-sampling-unit"}, dest: "pc_sampling_unit", arity: optOne, lower: true,
		choices: []string{"instructions", "cycles", "time"}, effect: ruled},
	{names: []string{"--pc-sampling-method"}, dest: "pc_sampling_method", arity: optOne, lower: true,
		choices: []string{"stochastic", "host_trap"}, effect: ruled},
	{names: []string{"--pc-sampling-interval"}, dest: "pc_sampling_interval", arity: optOne, integer: true, effect: ruled},
	{names: []string{"--stats"}, dest: "stats", arity: optBool},
	{names: []string{"-S", "--summary"}, dest: "summary", arity: optBool, effect: notProduced, what: summaryOutput},
	{names: []string{"-D", "--summary-per-domain"}, dest: "summary_per_domain", arity: optBool, effect: notProduced, what: summaryOutput},
	{names: []string{"--summary-groups"}, dest: "summary_groups", arity: optSome, effect: notProduced, what: summaryOutput},
	{names: []string{"--summary-output-file"}, dest: "summary_output_file", arity: optOne, effect: notProduced, what: summaryOutput},
	{names: []string{"-u", "--summary-units"}, dest: "summary_units", arity: optOne, choices: []string{"sec", "msec", "usec", "nsec"},
		effect: notProduced, what: summaryOutput},
	{names: []string{"-M", "--mangled-kernels"}, dest: "mangled_kernels", arity: optBool},
	{names: []string{"-T", "--truncate-kernels"}, dest: "truncate_kernels", arity: optBool},
	{names: []string{"--kernel-rename"}, dest: "kernel_rename", arity: optBool}, // no ROCTx ranges to rename by: names stay
	{names: []string{"--profile-mpi-ranks"}, dest: "profile_mpi_ranks", arity: optOne, effect: noOutput},
	{names: []string{"--mpi-world-rank-variable"}, dest: "mpi_world_rank_variable", arity: optOne, effect: ruled},
	{names: []string{"--mpi-world-size-variable"}, dest: "mpi_world_size_variable", arity: optOne, effect: ruled},
	{names: []string{"--kernel-include-regex"}, dest: "kernel_include_regex", arity: optOne},
	{names: []string{"--kernel-exclude-regex"}, dest: "kernel_exclude_regex", arity: optOne},
	{names: []string{"--kernel-iteration-range"}, dest: "kernel_iteration_range", arity: optSome},
	{names: []string{"-P", "--collection-period"}, dest: "collection_period", arity: optSome, effect: ruled},
	{names: []string{"--collection-period-unit"}, dest: "collection_period_unit", arity: optOne,
		choices: []string{"hour", "min", "sec", "msec", "usec", "nsec"}, effect: noOutput},
	{names: []string{"--selected-regions"}, dest: "selected_regions", arity: optBool, effect: ruled},
	{names: []string{"--selected-regions-ref-count"}, dest: "selected_regions_ref_count", arity: optBool, effect: noOutput},
	{names: []string{"--perfetto-backend"}, dest: "perfetto_backend", arity: optOne, choices: []string{"inprocess", "system"}, effect: noOutput},
	{names: []string{"--perfetto-buffer-size"}, dest: "perfetto_buffer_size", arity: optOne, integer: true, effect: noOutput},
	{names: []string{"--perfetto-buffer-fill-policy"}, dest: "perfetto_buffer_fill_policy", arity: optOne,
		choices: []string{"discard", "ring_buffer"}, effect: noOutput},
	{names: []string{"--perfetto-shmem-size-hint"}, dest: "perfetto_shmem_size_hint", arity: optOne, integer: true, effect: noOutput},
	{names: []string{"-L", "--list-avail"}, dest: "list_avail", arity: optBool},
	{names: []string{"--group-by-queue"}, dest: "group_by_queue", arity: optBool, effect: noOutput},
	{names: []string{"--preload"}, dest: "preload", arity: optMany, effect: noOutput},
	{names: []string{"--rocm-root"}, dest: "rocm_root", arity: optOne, effect: noOutput},
	{names: []string{"--sdk-soversion"}, dest: "sdk_soversion", arity: optOne, integer: true, effect: noOutput},
	{names: []string{"--sdk-version"}, dest: "sdk_version", arity: optOne, effect: noOutput},
	{names: []string{"--readlink"}, dest: "readlink", arity: optBool, effect: noOutput},
	{names: []string{"--realpath"}, dest: "realpath", arity: optBool, effect: noOutput},
	{names: []string{"--benchmark-mode"}, dest: "benchmark_mode", arity: optOne, lower: true,
		choices: []string{"disabled-sdk-contexts", "sdk-buffer-overhead", "sdk-callback-overhead", "tool-runtime-overhead", "execution-profile"},
		effect:  notProduced, what: "no SDK overhead is measured: the SDK is simulated"},
	{names: []string{"-A", "--agent-index"}, dest: "agent_index", arity: optOne,
		choices: []string{"absolute", "relative", "type-relative"}},
	{names: []string{"--suppress-marker-preload"}, dest: "suppress_marker_preload", arity: optBool, effect: noOutput},
	{names: []string{"--echo"}, dest: "echo", arity: optBool},
	{names: []string{"--disable-signal-handlers"}, dest: "disable_signal_handlers", arity: optBool, effect: noOutput},
	{names: []string{"--process-sync"}, dest: "process_sync", arity: optBool, effect: noOutput},
	{names: []string{"--minimum-output-data"}, dest: "minimum_output_data", arity: optOne, integer: true, effect: notProduced,
		what: "every output file is written, whatever its size"},
	{names: []string{"-p", "--pid", "--attach"}, dest: "pid", arity: optOne, integer: true, effect: ruled},
	{names: []string{"--attach-duration-msec"}, dest: "attach_duration_msec", arity: optOne, integer: true, effect: noOutput},
	{names: []string{"--attach-children"}, dest: "attach_children", arity: optBool, effect: noOutput},
	{names: []string{"--attach-sync-output"}, dest: "attach_sync_output", arity: optBool, effect: noOutput},
	{names: []string{"--advanced-thread-trace", "--att"}, dest: "advanced_thread_trace", arity: optBool, effect: ruled},
	{names: []string{"--att-no-intercept"}, dest: "att_no_intercept", arity: optBool, effect: ruled},
	{names: []string{"--att-library-path"}, dest: "att_library_path", arity: optSome, effect: noOutput},
	{names: []string{"--att-target-cu"}, dest: "att_target_cu", arity: optOne, effect: noOutput},
	{names: []string{"--att-simd-select"}, dest: "att_simd_select", arity: optOne, effect: noOutput},
	{names: []string{"--att-consecutive-kernels"}, dest: "att_consecutive_kernels", arity: optOne, effect: ruled},
	{names: []string{"--att-buffer-size"}, dest: "att_buffer_size", arity: optOne, effect: noOutput},
	{names: []string{"--att-resource-mode"}, dest: "att_resource_mode", arity: optOne,
		choices: []string{"default", "hsa", "code-object"}, effect: noOutput},
	{names: []string{"--att-shader-engine-mask"}, dest: "att_shader_engine_mask", arity: optOne, effect: noOutput},
	{names: []string{"--att-gpu-index"}, dest: "att_gpu_index", arity: optOne, effect: noOutput},
	{names: []string{"--att-perfcounters"}, dest: "att_perfcounters", arity: optOne, effect: ruled},
	{names: []string{"--att-perfcounter-ctrl"}, dest: "att_perfcounter_ctrl", arity: optOne, integer: true, effect: ruled},
	{names: []string{"--att-perfcounter-target-only"}, dest: "att_perfcounter_target_only", arity: optBool, effect: noOutput},
	{names: []string{"--att-activity"}, dest: "att_activity", arity: optOne, integer: true, effect: ruled},
	{names: []string{"--att-serialize-all"}, dest: "att_serialize_all", arity: optBool, effect: noOutput},
	{names: []string{"--att-no-detail"}, dest: "att_no_detail", arity: optBool, effect: noOutput},
}

// What tracing options ask for that prof does not write, as the clause
// after the option in its warning. The simulated application calls the
// simulator directly: it has no HIP, HSA or other runtime API calls for a
// tool to trace.
func apiTrace(api string) string {
	return "no " + api + " API trace is written: the simulated application makes no " + api + " API calls"
}

const (
	kfdTrace      = "no KFD event trace is written: the simulator has no kernel driver"
	summaryOutput = "no end-of-run summary is printed (--stats writes kernel_stats.csv and domain_stats.csv)"
)

// ompt categories (rocprofv3.py OMPT_TRACE_CATEGORIES); --ompt-trace also
// takes one truth value.
var omptCategories = []string{"all", "thread", "parallel", "task", "sync", "mutex", "target", "device", "error"}

// perfetto buffer size bounds in KB (rocprofv3.py perfetto_buffer_size_kb).
const perfettoBufferMaxKB = (1<<32 - 1) / 1024

// inputOnly are keys an input file's job may hold that have no command-line
// option (rocprofv3.py reads pmc_groups from input files only).
var inputOnly = map[string]arity{"pmc_groups": optGroups}

func optionByName(name string) (option, bool) {
	for _, o := range optionTable {
		if slices.Contains(o.names, name) {
			return o, true
		}
	}
	return option{}, false
}

func optionByDest(dest string) (option, bool) {
	for _, o := range optionTable {
		if o.dest == dest {
			return o, true
		}
	}
	if a, ok := inputOnly[dest]; ok {
		return option{dest: dest, arity: a}, true
	}
	return option{}, false
}

// value is what one option was given: a boolean, one string, a list of
// words, or (for --pmc) one list per occurrence. From is the spelling the
// user wrote, for diagnostics.
type value struct {
	Bool   bool
	Str    string
	List   []string
	Groups [][]string
	From   string
}

// equal reports whether two values of the same option say the same thing.
func (v value) equal(w value) bool {
	return v.Bool == w.Bool && v.Str == w.Str && slices.Equal(v.List, w.List) &&
		slices.EqualFunc(v.Groups, w.Groups, func(a, b []string) bool { return slices.Equal(a, b) })
}

// Values are the options of one command line or one input-file job, by
// dest. An absent key is an option not given.
type Values map[string]value

// Command is a parsed `replayspec prof` command line: the options before
// "--" and the spec after it.
type Command struct {
	Values Values
	Spec   string
}

// UsageError is a command line that does not parse: rocprofv3's argparse
// rejects it before anything runs, with exit status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageErr(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// isOptionWord reports whether a word starts an option (argparse: a word
// beginning with "-" that is not "-" itself).
func isOptionWord(s string) bool { return strings.HasPrefix(s, "-") && s != "-" }

// ParseArgs reads rocprofv3-style options up to "--" and the spec after
// it. It reports grammar errors only (*UsageError): an unknown option, a
// missing value, a value outside an option's choices, a boolean that is not
// one. What rocprofv3 refuses about a combination is Plan's job.
func ParseArgs(args []string) (*Command, error) {
	cmd := &Command{Values: Values{}}
	opts := args
	var rest []string
	sawDashes := false
	if i := slices.Index(args, "--"); i >= 0 {
		opts, rest, sawDashes = args[:i], args[i+1:], true
	}
	for i := 0; i < len(opts); i++ {
		word := opts[i]
		if !isOptionWord(word) {
			return nil, usageErr("unexpected argument %q: options come first, then \"--\" and the spec (replayspec prof [options] -- SPEC)", word)
		}
		name, inline, hasInline := splitOptionWord(word)
		o, ok := optionByName(name)
		if !ok {
			return nil, usageErr("unknown option %s (see replayspec prof --help)", name)
		}
		// following returns the words after the option that are not
		// options themselves (argparse's greedy nargs).
		following := func() []string {
			var vs []string
			for i+1 < len(opts) && !isOptionWord(opts[i+1]) {
				i++
				vs = append(vs, opts[i])
			}
			return vs
		}
		v := value{From: name}
		switch o.arity {
		case optFlag:
			if hasInline {
				return nil, usageErr("%s takes no value", name)
			}
			v.Bool = true
		case optBool:
			text := ""
			switch {
			case hasInline:
				text = inline
			case i+1 < len(opts) && !isOptionWord(opts[i+1]):
				i++
				text = opts[i]
			default:
				v.Bool = true
			}
			if text != "" || hasInline {
				b, err := parseBool(text)
				if err != nil {
					return nil, usageErr("%s takes an optional true/false value, not %q (yes/no, true/false, on/off, 1/0)", name, text)
				}
				v.Bool = b
			}
		case optOne:
			switch {
			case hasInline:
				v.Str = inline
			case i+1 < len(opts) && !isOptionWord(opts[i+1]):
				i++
				v.Str = opts[i]
			default:
				return nil, usageErr("%s needs a value", name)
			}
			if v.Str == "" {
				return nil, usageErr("%s needs a value", name)
			}
		case optSome, optMany:
			if hasInline {
				v.List = []string{inline}
			} else {
				v.List = following()
			}
			if o.arity == optSome && len(v.List) == 0 {
				return nil, usageErr("%s needs at least one value", name)
			}
		case optGroups:
			var words []string
			if hasInline {
				words = []string{inline}
			} else {
				words = following()
			}
			v.Groups = append(cmd.Values[o.dest].Groups, counterWords(words))
		}
		if err := checkValue(o, name, &v); err != nil {
			return nil, err
		}
		cmd.Values[o.dest] = v
	}
	standalone := cmd.Values.on("version") || cmd.Values.on("list_avail") // need no application
	switch {
	case standalone && len(rest) == 0:
		return cmd, nil
	case !sawDashes:
		return nil, usageErr("no spec: end the options with \"--\" and the spec file (replayspec prof [options] -- SPEC)")
	case len(rest) == 0:
		return nil, usageErr("no spec after \"--\": give the spec whose application to profile")
	case len(rest) > 1:
		return nil, usageErr("one spec after \"--\", got %d: %s", len(rest), strings.Join(rest, " "))
	}
	cmd.Spec = rest[0]
	return cmd, nil
}

// splitOptionWord splits "--name=value" and the short forms "-dVALUE" and
// "-d=VALUE", as argparse does.
func splitOptionWord(word string) (name, inline string, hasInline bool) {
	if strings.HasPrefix(word, "--") {
		return strings.Cut(word, "=")
	}
	if len(word) > 2 {
		rest := word[2:]
		return word[:2], strings.TrimPrefix(rest, "="), true
	}
	return word, "", false
}

// checkValue lower-cases and checks choices and integers.
func checkValue(o option, name string, v *value) error {
	check := func(s string) (string, error) {
		if o.lower {
			s = strings.ToLower(s)
		}
		if len(o.choices) > 0 && !slices.Contains(o.choices, s) {
			return s, usageErr("%s: invalid choice %q (choose from %s)", name, s, strings.Join(o.choices, ", "))
		}
		if o.integer {
			if _, err := strconv.ParseInt(s, 10, 64); err != nil {
				return s, usageErr("%s: invalid integer value %q", name, s)
			}
		}
		return s, nil
	}
	var err error
	if o.arity == optOne && v.Str != "" {
		if v.Str, err = check(v.Str); err != nil {
			return err
		}
	}
	for k := range v.List {
		if v.List[k], err = check(v.List[k]); err != nil {
			return err
		}
	}
	switch o.dest {
	case "perfetto_buffer_size":
		if n, _ := strconv.ParseInt(v.Str, 10, 64); n < 1 || n > perfettoBufferMaxKB {
			return usageErr("%s: must be between 1 and %d KB", name, perfettoBufferMaxKB)
		}
	case "ompt_trace":
		return checkOMPT(name, v)
	}
	return nil
}

// checkOMPT reads --ompt-trace as rocprofv3.py's omptTraceArgAction does:
// nothing or one truth value, or space-separated categories (a comma is an
// error of its own).
func checkOMPT(name string, v *value) error {
	var bad []string
	for k, w := range v.List {
		v.List[k] = strings.ToLower(strings.TrimSpace(w))
		if strings.Contains(w, ",") {
			return usageErr("%s: categories are space-separated, not comma-separated: %q", name, w)
		}
	}
	if len(v.List) == 1 {
		if _, err := parseBool(v.List[0]); err == nil {
			return nil
		}
	}
	for _, w := range v.List {
		if !slices.Contains(omptCategories, w) {
			bad = append(bad, w)
		}
	}
	if len(bad) > 0 {
		return usageErr("%s: unknown categor%s %s (categories: %s)", name, map[bool]string{true: "ies", false: "y"}[len(bad) > 1],
			strings.Join(bad, " "), strings.Join(omptCategories, " "))
	}
	return nil
}

// parseBool reads rocprofv3's truth values (strtobool: y/yes/t/true/on/1
// and n/no/f/false/off/0, any case).
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "y", "yes", "t", "true", "on", "1":
		return true, nil
	case "n", "no", "f", "false", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("invalid truth value %q", s)
}

// counterWords splits the words of one --pmc occurrence into counter names.
// The tool library treats commas (and other punctuation) as separators, so
// "--pmc A,B" and "--pmc A B" name the same group.
func counterWords(words []string) []string {
	var out []string
	for _, w := range words {
		out = append(out, strings.FieldsFunc(w, func(r rune) bool {
			return r == ',' || r == ' ' || r == '\t' || r == ';' || r == '|'
		})...)
	}
	return out
}

// accessors used by Plan.
func (v Values) has(dest string) bool      { _, ok := v[dest]; return ok }
func (v Values) on(dest string) bool       { return v[dest].Bool }
func (v Values) str(dest string) string    { return v[dest].Str }
func (v Values) list(dest string) []string { return v[dest].List }

// given reports whether an option was given with a value that asks for
// something: a boolean true, or any value of another option.
func (v Values) given(o option) bool {
	x, ok := v[o.dest]
	if !ok {
		return false
	}
	if o.arity == optBool || o.arity == optFlag {
		return x.Bool
	}
	return true
}

// fromAny is the spelling of the first of dests that was given.
func (v Values) fromAny(dests ...string) string {
	for _, d := range dests {
		if v.has(d) {
			return v.from(d)
		}
	}
	return v.from(dests[0])
}

func (v Values) from(dest string) string {
	if f := v[dest].From; f != "" {
		return f
	}
	if o, ok := optionByDest(dest); ok && len(o.names) > 0 {
		return o.names[len(o.names)-1]
	}
	return dest
}
