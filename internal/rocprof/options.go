package rocprof

import (
	"errors"
	"fmt"
	"strings"
)

// Options are rocprofv3's command-line options that this tool models.
type Options struct {
	// PMC holds one entry per --pmc occurrence: one counter group each.
	PMC [][]string
	// ReplayMode is "", "application" or "kernel".
	ReplayMode string
	// KernelReplayBeta is --kernel-replay-beta-enabled.
	KernelReplayBeta bool
	// OutputDirectory (-d) and OutputFile (-o) accept %pid% and %hostname%.
	// Defaults: %hostname%/%pid% and %pid%, as rocprofv3's.
	OutputDirectory string
	OutputFile      string
	// Formats is -f/--output-format: csv and/or json (default csv).
	Formats []string

	// Services whose combination with kernel replay is refused (RPV-7):
	// the flag the user wrote for each, empty when not given.
	ATT, PCSampling, SPM string
	// Services allowed under kernel replay with a warning (RPV-7).
	KernelTrace, Stats bool
	// PID is attach mode (--pid); CollectionPeriod is --collection-period.
	PID, CollectionPeriod string

	// Spec is the spec file after "--".
	Spec string
}

// KernelReplay reports whether kernel replay was asked for.
func (o Options) KernelReplay() bool { return o.ReplayMode == "kernel" }

// Defaults of the output options. The simulated process has a fixed pid and
// host name so that output is the same on every machine.
const (
	PID               = 1000
	Hostname          = "replayspec-sim"
	DefaultOutputDir  = "%hostname%/%pid%"
	DefaultOutputFile = "%pid%"
)

// Diagnostic is a refused command line: what is wrong, in words, and the
// rule that says so (empty for plain usage errors). Exit status 2.
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

func usageErr(format string, args ...any) error {
	return &Diagnostic{Msg: fmt.Sprintf(format, args...)}
}

// isOption reports whether a word starts a new option (a negative number
// does not occur among our values).
func isOption(s string) bool { return strings.HasPrefix(s, "-") && s != "-" }

// ParseArgs reads rocprofv3-style options up to "--" and the spec after it.
// It reports usage errors only (an unknown option, a missing value); what
// rocprofv3 refuses about a combination is Check's job.
func ParseArgs(args []string) (Options, error) {
	var o Options
	i := 0
	// values takes the option's values: "--opt=a,b" or the words that follow
	// up to the next option (rocprofv3's nargs="+").
	values := func(name, inline string, hasInline bool) []string {
		if hasInline {
			return []string{inline}
		}
		var vs []string
		for i+1 < len(args) && !isOption(args[i+1]) {
			i++
			vs = append(vs, args[i])
		}
		return vs
	}
	one := func(name, inline string, hasInline bool) (string, error) {
		if hasInline {
			if inline == "" {
				return "", usageErr("%s needs a value", name)
			}
			return inline, nil
		}
		if i+1 >= len(args) || isOption(args[i+1]) {
			return "", usageErr("%s needs a value", name)
		}
		i++
		return args[i], nil
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest := args[i+1:]
			switch len(rest) {
			case 0:
				return o, usageErr("no spec after \"--\": give the spec whose application to profile")
			case 1:
				o.Spec = rest[0]
			default:
				return o, usageErr("one spec after \"--\", got %d: %s", len(rest), strings.Join(rest, " "))
			}
			return o, nil
		}
		if !isOption(a) {
			return o, usageErr("unexpected argument %q: put the spec after \"--\" (replayspec prof [options] -- SPEC)", a)
		}
		name, inline, hasInline := strings.Cut(a, "=")
		var err error
		switch name {
		case "--pmc":
			var group []string
			for _, v := range values(name, inline, hasInline) {
				group = append(group, splitList(v)...)
			}
			o.PMC = append(o.PMC, group) // empty: Check reports it
		case "--replay-mode":
			o.ReplayMode, err = one(name, inline, hasInline)
		case "--kernel-replay-beta-enabled":
			o.KernelReplayBeta = true
		case "-d", "--output-directory":
			o.OutputDirectory, err = one(name, inline, hasInline)
		case "-o", "--output-file":
			o.OutputFile, err = one(name, inline, hasInline)
		case "-f", "--output-format":
			vs := values(name, inline, hasInline)
			if len(vs) == 0 {
				return o, usageErr("%s needs at least one format (csv, json)", name)
			}
			for _, v := range vs {
				o.Formats = append(o.Formats, splitList(v)...)
			}
		case "--att", "--advanced-thread-trace":
			o.ATT = name
		case "--pc-sampling-beta-enabled", "--pc-sampling":
			o.PCSampling = name
		case "--pc-sampling-method", "--pc-sampling-unit", "--pc-sampling-interval":
			if _, err = one(name, inline, hasInline); err == nil && o.PCSampling == "" {
				o.PCSampling = name
			}
		case "--spm", "--spm-beta-enabled":
			o.SPM = name
		case "--kernel-trace":
			o.KernelTrace = true
		case "--stats":
			o.Stats = true
		case "--pid":
			o.PID, err = one(name, inline, hasInline)
		case "--collection-period":
			o.CollectionPeriod, err = one(name, inline, hasInline)
		default:
			return o, usageErr("unknown option %s (see replayspec prof --help)", a)
		}
		if err != nil {
			return o, err
		}
	}
	return o, usageErr("no spec: end the options with \"--\" and the spec file (replayspec prof [options] -- SPEC)")
}

// splitList splits one word of a counter or format list at commas and
// spaces.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

// Check applies rocprofv3's rules for combining options. It returns the
// warnings to print when the combination is allowed, and every refusal
// otherwise (errors.Join of *Diagnostic).
func (o Options) Check() (warnings []string, err error) {
	var errs []error
	refuse := func(rule, format string, args ...any) {
		errs = append(errs, &Diagnostic{Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
	for i, g := range o.PMC {
		if len(g) == 0 {
			refuse("", "--pmc occurrence %d names no counter: each --pmc is one counter group and needs at least one counter", i+1)
		}
	}
	switch o.ReplayMode {
	case "", "application", "kernel":
	default:
		refuse("", "--replay-mode %q is not a replay mode: use kernel or application", o.ReplayMode)
	}
	for _, f := range o.Formats {
		switch f {
		case "csv", "json":
		case "pftrace", "otf2", "rocpd":
			refuse("", "--output-format %s is not produced by replayspec prof: use csv and/or json", f)
		default:
			refuse("", "--output-format %q is not an output format: use csv and/or json", f)
		}
	}
	if o.KernelReplay() {
		if len(o.PMC) == 0 {
			refuse("RPV-1", "--replay-mode kernel needs counters: give at least one --pmc group (kernel replay replays each dispatch once per counter group and collects nothing else)")
		}
		if !o.KernelReplayBeta {
			refuse("RPV-1", "--replay-mode kernel is experimental: add --kernel-replay-beta-enabled to acknowledge it")
		}
		why := "kernel replay varies only the counter group from pass to pass, so %s would stay on in every pass and report each kernel once per pass under one dispatch id"
		if o.ATT != "" {
			refuse("RPV-7", "--replay-mode kernel cannot be combined with %s (thread trace): "+why, o.ATT, "thread trace")
		}
		if o.PCSampling != "" {
			refuse("RPV-7", "--replay-mode kernel cannot be combined with %s (PC sampling): "+why, o.PCSampling, "PC sampling")
		}
		if o.SPM != "" {
			refuse("RPV-7", "--replay-mode kernel cannot be combined with %s (SPM): "+why, o.SPM, "SPM")
		}
		if o.KernelTrace {
			warnings = append(warnings, "--kernel-trace with --replay-mode kernel: a replayed dispatch is traced once per pass, so the kernel trace holds one record per pass with the same dispatch id")
		}
		if o.Stats {
			warnings = append(warnings, "--stats with --replay-mode kernel: every pass of a replayed dispatch counts as a call, so calls and total durations are multiplied by the pass count")
		}
	} else {
		if o.KernelReplayBeta {
			warnings = append(warnings, "--kernel-replay-beta-enabled has no effect without --replay-mode kernel")
		}
		for _, flag := range []string{o.ATT, o.PCSampling, o.SPM} {
			if flag != "" {
				refuse("", "%s is not modelled by replayspec prof: it produces counter collection, kernel trace and stats only", flag)
			}
		}
	}
	if len(o.PMC) > 1 && o.PID != "" {
		refuse("", "--pid (attach mode) takes a single --pmc group, %d were given: several groups need the application to run once per group from its start", len(o.PMC))
	} else if o.PID != "" {
		refuse("", "--pid: attach mode is not available here: replayspec prof always launches the spec's application itself")
	}
	if len(o.PMC) > 1 && o.CollectionPeriod != "" {
		refuse("", "--collection-period takes a single --pmc group, %d were given: the groups cannot share one collection window", len(o.PMC))
	} else if o.CollectionPeriod != "" {
		warnings = append(warnings, "--collection-period is ignored: the simulated application is profiled from start to end")
	}
	return warnings, errors.Join(errs...)
}
