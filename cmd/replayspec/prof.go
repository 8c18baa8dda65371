package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/rocprof"
	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{name: "prof", summary: "profile a spec's application as rocprofv3 would (kernel or application replay)", run: runProf})
}

const profUsage = `Usage: replayspec prof [rocprofv3 options] -- SPEC

Plays the application part of SPEC (buffers and dispatches; its contexts and
tool plan are ignored) on the simulator under a rocprofv3-like tool, and
writes rocprofv3's output. A spec with a matrix runs case by case, each case
in DIR/NAME=VALUE,.../. Of the spec's expect block, what the application
sees (completions, memory) is judged; expectations about the spec's own
tool, which rocprofv3 replaces, are not (prof says which). See
docs/rocprofv3.md.

Every rocprofv3 option is accepted, with rocprofv3's names, short forms and
grammar (a boolean option takes an optional value: --x, --x=false, --x no).
Those prof honours:
  --pmc COUNTER...               one counter group per occurrence
  --replay-mode kernel|application
                                 kernel: replay each dispatch once per counter
                                 group collectable on its agent (needs --pmc and
                                 --kernel-replay-beta-enabled); application
                                 (default): run the whole application once per
                                 --pmc group, output in pass_1, pass_2, ...
  --kernel-replay-beta-enabled   acknowledge that kernel replay is experimental
  -i, --input FILE               JSON or YAML {"jobs": [...]} (pass_N), or the
                                 deprecated text format, pmc: lines (pmc_N)
  -d, --output-directory DIR     default: the current directory
  -o, --output-file NAME         file name prefix, default %hostname%/%pid%
                                 (replayspec-sim/1000); prof refuses to write
                                 over files whose names carry the pid
  -f, --output-format FMT...     csv and/or json, space separated; default both
                                 (rocprofv3's default, rocpd, is not written)
  --output-config                also write PREFIX_config.json (the tool's
                                 configuration: the counter groups, kernel_replay)
  --kernel-trace, --stats        kernel dispatch trace and kernel statistics
                                 (under kernel replay: one record per pass);
                                 -s and -r turn the kernel trace on
  -A, --agent-index absolute|relative|type-relative
  --kernel-include-regex RE, --kernel-exclude-regex RE,
  --kernel-iteration-range RANGE...
                                 which dispatches collect counters
  -T, -M, --kernel-rename        accepted; the simulated kernel names are plain
  -v, --version                  print the version
  -L, --list-avail               list each agent's counters (of SPEC's machine,
                                 or of every simulated agent kind)
  --echo                         print the command, run nothing
  --log-level config|info|trace  also print each run's configuration
Refused with --replay-mode kernel (RPV-7): --att, --att-no-intercept,
--pc-sampling-beta-enabled, --spm and its settings. Options asking for what
the simulator cannot produce (API traces, thread trace, PC sampling, SPM,
summaries, attach mode, ...) are accepted with one warning each saying what
is not written; options that change nothing prof writes are accepted quietly.

Exit status (rocprofv3's): 0 written, 1 refused combination, failed run or
failed expectation, 2 a command line that does not parse.

Example:
  replayspec prof --pmc SQ_WAVES SQ_INSTS_VALU TCC_HIT TCC_MISS --replay-mode kernel \
      --kernel-replay-beta-enabled -f csv json -d out -- rocprof/testdata/mi300.yaml
`

func runProf(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 { // rocprofv3 without arguments prints its help
		io.WriteString(stdout, profUsage)
		return exitOK
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" {
			io.WriteString(stdout, profUsage)
			return exitOK
		}
	}
	say := func(err error) {
		for _, e := range rocprof.Errors(err) {
			fmt.Fprintf(stderr, "replayspec prof: %v\n", e)
		}
	}
	cmd, err := rocprof.ParseArgs(args)
	if err != nil {
		say(err)
		return exitUsage // argparse's status for a command line that does not parse
	}
	if cmd.Values["version"].Bool { // -v: rocprofv3 prints its version and stops
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	}
	if cmd.Values["list_avail"].Bool { // -L: list what can be collected, run nothing
		cases, err := loadProfSpec(cmd.Spec)
		if err != nil {
			say(err)
			return exitFail
		}
		var machine *spec.Spec
		if len(cases) > 0 {
			machine = &cases[0]
		}
		list, err := rocprof.ListAvail(machine)
		if err != nil {
			say(err)
			return exitFail
		}
		io.WriteString(stdout, list)
		return exitOK
	}
	plan, err := cmd.Plan(e.lookupEnv)
	if plan != nil {
		for _, w := range plan.Warnings {
			fmt.Fprintf(stderr, "replayspec prof: warning: %s\n", w)
		}
	}
	if err != nil {
		say(err)
		return exitFail // rocprofv3's fatal_error
	}
	cases, err := loadProfSpec(cmd.Spec)
	if err != nil {
		say(err)
		return exitFail
	}
	if cmd.Values["echo"].Bool { // --echo: say what would run, run nothing
		fmt.Fprintf(stdout, "command: [%q]\n", cmd.Spec)
		return exitOK
	}
	if err := plan.CheckOutputDirs(); err != nil {
		say(err)
		return exitFail
	}
	code := exitOK
	for _, s := range cases {
		p, where := plan, ""
		if s.Case != nil { // each case of a matrix in a folder of its own
			p, where = plan.Under(s.Case.ID()), s.Case.ID()+": "
		}
		if c := profCase(p, s, where, cmd.Values["log_level"].Str, stdout, stderr); c != exitOK {
			code = c
		}
	}
	return code
}

// loadProfSpec reads the spec after "--" ("" for none): its cases, one for
// a spec without a matrix.
func loadProfSpec(path string) ([]spec.Spec, error) {
	if path == "" {
		return nil, nil
	}
	cases, err := spec.LoadCases(path)
	if err != nil {
		return nil, err
	}
	return cases, nil
}

// profCase profiles one spec (or one case of a matrix) and writes its
// output, then judges the application's expectations.
func profCase(plan *rocprof.Plan, s spec.Spec, where, logLevel string, stdout, stderr io.Writer) int {
	say := func(err error) {
		for _, e := range rocprof.Errors(err) {
			fmt.Fprintf(stderr, "replayspec prof: %s%v\n", where, e)
		}
	}
	res, err := rocprof.Run(plan, s)
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "replayspec prof: %swarning: %s\n", where, w)
		}
	}
	if err != nil {
		say(err)
		return exitFail
	}
	if logLevel == "config" || logLevel == "info" || logLevel == "trace" {
		for _, run := range res.Runs {
			pass := ""
			if run.Config.Number > 0 {
				pass = fmt.Sprintf(" (pass %d)", run.Config.Number)
			}
			fmt.Fprintf(stderr, "- rocprofv3 configuration%s:\n", pass)
			for _, line := range run.Config.Describe() {
				fmt.Fprintf(stderr, "    - %s\n", line)
			}
		}
	}
	if old := res.Collisions(); len(old) > 0 {
		say(fmt.Errorf("%s already exists (and %d more file(s)): rocprofv3 names its files after the process id, so a new run never writes over an old one, but the simulated process is always pid %d. Remove the old output, give another -d, or name the files with -o NAME (without %%pid%%), which a new run writes over as rocprofv3 does",
			old[0], len(old)-1, rocprof.PID))
		return exitFail
	}
	paths, err := res.Write()
	if err != nil {
		say(err)
		return exitFail
	}
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	if len(paths) == 0 {
		fmt.Fprintf(stdout, "%sno output: the run produced no counter or kernel dispatch record\n", where)
	}
	return profExpectations(res, s, where, stdout, stderr)
}

// profExpectations checks the application's expectations (ApplicationExpect)
// against every run of the application (each is a whole run, with its own
// trace), and says which of the spec's expectations it leaves out.
func profExpectations(res *rocprof.Result, s spec.Spec, where string, stdout, stderr io.Writer) int {
	kept, dropped := rocprof.ApplicationExpect(s)
	if len(dropped) > 0 {
		fmt.Fprintf(stdout, "%sexpect: %s not judged (about the spec's own tool, which rocprofv3 replaces)\n", where, strings.Join(dropped, ", "))
	}
	s.Expect = kept
	code := exitOK
	for _, run := range res.Runs {
		for _, v := range check.Expectations(s, run.TraceOf(s.Name)) {
			dir := ""
			if run.Config.Dir != "" {
				dir = run.Config.Dir + ": "
			}
			fmt.Fprintf(stderr, "replayspec prof: %s%s%s\n", where, dir, v)
			code = exitFail
		}
	}
	return code
}
