package rocprof

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The command-line grammar of rocprofv3 for the options replayspec prof
// knows (source/bin/rocprofv3.py, parse_arguments): names, short forms,
// how many values each takes, their choices. Options a kernel replay run
// refuses or that prof does not model are recognised too, so that the user
// gets the real reason rather than "unknown option".

// arity is how many values an option takes, in argparse's terms.
type arity int

const (
	optBool   arity = iota // nargs="?", const=True: --x, --x=BOOL, --x BOOL
	optOne                 // exactly one value
	optSome                // nargs="+": one or more
	optMany                // nargs="*": zero or more
	optGroups              // nargs="*" with action="append": one group per occurrence (--pmc)
)

// option is one row of the grammar.
type option struct {
	names   []string // spellings, short first
	dest    string   // the key an input file uses for it (argparse's dest)
	arity   arity
	choices []string // allowed values, after lower-casing when lower is set
	lower   bool     // values are lower-cased first (argparse type=str.lower)
	integer bool     // the value must be an integer (type=int)
}

// optionTable lists every option prof recognises, in rocprofv3.py's order.
var optionTable = []option{
	{names: []string{"-i", "--input"}, dest: "input", arity: optOne},
	{names: []string{"-o", "--output-file"}, dest: "output_file", arity: optOne},
	{names: []string{"-d", "--output-directory"}, dest: "output_directory", arity: optOne},
	{names: []string{"-f", "--output-format"}, dest: "output_format", arity: optSome, lower: true,
		choices: []string{"csv", "json", "pftrace", "otf2", "rocpd"}},
	{names: []string{"--output-config"}, dest: "output_config", arity: optBool},
	{names: []string{"-r", "--runtime-trace"}, dest: "runtime_trace", arity: optBool},
	{names: []string{"-s", "--sys-trace"}, dest: "sys_trace", arity: optBool},
	{names: []string{"--kernel-trace"}, dest: "kernel_trace", arity: optBool},
	{names: []string{"--pmc"}, dest: "pmc", arity: optGroups},
	{names: []string{"--replay-mode"}, dest: "replay_mode", arity: optOne, choices: []string{"kernel", "application"}},
	{names: []string{"--kernel-replay-beta-enabled"}, dest: "kernel_replay_beta_enabled", arity: optBool},
	{names: []string{"--spm-beta-enabled"}, dest: "spm_beta_enabled", arity: optBool},
	{names: []string{"--spm"}, dest: "spm", arity: optMany},
	{names: []string{"--spm-sample-interval"}, dest: "spm_sample_interval", arity: optOne, integer: true},
	{names: []string{"--spm-sample-interval-unit"}, dest: "spm_sample_interval_unit", arity: optOne, lower: true,
		choices: []string{"sclk_cycles"}},
	{names: []string{"--pc-sampling-beta-enabled"}, dest: "pc_sampling_beta_enabled", arity: optBool},
	{names: []string{"--pc-sampling-unit"}, dest: "pc_sampling_unit", arity: optOne, lower: true,
		choices: []string{"instructions", "cycles", "time"}},
	{names: []string{"--pc-sampling-method"}, dest: "pc_sampling_method", arity: optOne, lower: true,
		choices: []string{"stochastic", "host_trap"}},
	{names: []string{"--pc-sampling-interval"}, dest: "pc_sampling_interval", arity: optOne, integer: true},
	{names: []string{"--stats"}, dest: "stats", arity: optBool},
	{names: []string{"-M", "--mangled-kernels"}, dest: "mangled_kernels", arity: optBool},
	{names: []string{"-T", "--truncate-kernels"}, dest: "truncate_kernels", arity: optBool},
	{names: []string{"--kernel-include-regex"}, dest: "kernel_include_regex", arity: optOne},
	{names: []string{"--kernel-exclude-regex"}, dest: "kernel_exclude_regex", arity: optOne},
	{names: []string{"--kernel-iteration-range"}, dest: "kernel_iteration_range", arity: optSome},
	{names: []string{"-P", "--collection-period"}, dest: "collection_period", arity: optSome},
	{names: []string{"--collection-period-unit"}, dest: "collection_period_unit", arity: optOne,
		choices: []string{"hour", "min", "sec", "msec", "usec", "nsec"}},
	{names: []string{"-A", "--agent-index"}, dest: "agent_index", arity: optOne,
		choices: []string{"absolute", "relative", "type-relative"}},
	{names: []string{"-p", "--pid", "--attach"}, dest: "pid", arity: optOne, integer: true},
	{names: []string{"--advanced-thread-trace", "--att"}, dest: "advanced_thread_trace", arity: optBool},
	{names: []string{"--att-no-intercept"}, dest: "att_no_intercept", arity: optBool},
}

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
	switch {
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
		v.Str, err = check(v.Str)
	}
	for k := range v.List {
		if v.List[k], err = check(v.List[k]); err != nil {
			return err
		}
	}
	return err
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
func (v Values) from(dest string) string {
	if f := v[dest].From; f != "" {
		return f
	}
	if o, ok := optionByDest(dest); ok && len(o.names) > 0 {
		return o.names[len(o.names)-1]
	}
	return dest
}
