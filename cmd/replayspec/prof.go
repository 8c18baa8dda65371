package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/rocprof"
	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{name: "prof", summary: "profile a spec's application as rocprofv3 would (kernel or application replay)", run: runProf})
}

const profUsage = `Usage: replayspec prof [rocprofv3 options] -- SPEC

Plays the application part of SPEC (buffers and dispatches; its contexts and
tool plan are ignored, its expect block is checked) on the simulator under a
rocprofv3-like tool, and writes rocprofv3's output. See docs/rocprofv3.md.

Options (rocprofv3's names, short forms and grammar; a boolean option takes
an optional value: --x, --x=false, --x no):
  --pmc COUNTER...               one counter group per occurrence
  --replay-mode kernel|application
                                 kernel: replay each dispatch once per counter
                                 group collectable on its agent (needs --pmc and
                                 --kernel-replay-beta-enabled); application
                                 (default): run the whole application once per
                                 --pmc group, output in pass_1, pass_2, ...
  --kernel-replay-beta-enabled   acknowledge that kernel replay is experimental
  -i, --input FILE               JSON or YAML {"jobs": [...]}: pmc, pmc_groups,
                                 replay_mode, kernel filters, ... per job
  -d, --output-directory DIR     default: the current directory
  -o, --output-file NAME         file name prefix, default %hostname%/%pid%
                                 (replayspec-sim/1000)
  -f, --output-format FMT...     csv and/or json, space separated; default both
                                 (rocprofv3's default, rocpd, is not written)
  --output-config                also write PREFIX_config.json (the tool's
                                 configuration: the counter groups, kernel_replay)
  --kernel-trace, --stats        kernel dispatch trace and kernel statistics
                                 (under kernel replay: one record per pass)
  -A, --agent-index absolute|relative|type-relative
  --kernel-include-regex RE, --kernel-exclude-regex RE,
  --kernel-iteration-range RANGE...
                                 which dispatches collect counters
  -T, --truncate-kernels, -M, --mangled-kernels
                                 accepted; the simulated kernel names are plain
  --att, --att-no-intercept, --pc-sampling-beta-enabled, --spm COUNTER...,
  --spm-sample-interval N        refused with --replay-mode kernel (RPV-7)
  -p/--pid PID, -P/--collection-period P...
                                 refused with several counter groups

Exit status (rocprofv3's): 0 written, 1 refused combination, failed run or
failed expectation, 2 a command line that does not parse.

Example:
  replayspec prof --pmc SQ_WAVES SQ_INSTS_VALU TCC_HIT TCC_MISS --replay-mode kernel \
      --kernel-replay-beta-enabled -f csv json -d out -- rocprof/testdata/mi300.yaml
`

func runProf(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
	plan, err := cmd.Plan(os.LookupEnv)
	if plan != nil {
		for _, w := range plan.Warnings {
			fmt.Fprintf(stderr, "replayspec prof: warning: %s\n", w)
		}
	}
	if err != nil {
		say(err)
		return exitFail // rocprofv3's fatal_error
	}
	s, err := spec.Load(cmd.Spec)
	if err != nil {
		say(err)
		return exitFail
	}
	res, err := rocprof.Run(plan, s)
	if err != nil {
		say(err)
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
		fmt.Fprintln(stdout, "no output: the run produced no counter or kernel dispatch record")
	}
	return profExpectations(res, s, stderr)
}

// profExpectations checks the spec's expect block against every run of
// the application (each is a whole run, with its own trace).
func profExpectations(res *rocprof.Result, s spec.Spec, stderr io.Writer) int {
	code := exitOK
	for _, run := range res.Runs {
		for _, v := range check.Expectations(s, run.TraceOf(s.Name)) {
			where := ""
			if run.Config.Dir != "" {
				where = run.Config.Dir + ": "
			}
			fmt.Fprintf(stderr, "replayspec prof: %s%s\n", where, v)
			code = exitFail
		}
	}
	return code
}
