package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/replayspec/replayspec/internal/rocprof"
	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{name: "prof", summary: "profile a spec's application as rocprofv3 would (kernel or application replay)", run: runProf})
}

const profUsage = `Usage: replayspec prof [rocprofv3 options] -- SPEC

Plays the application part of SPEC (buffers and dispatches; its contexts and
tool plan are ignored) on the simulator under a rocprofv3-like tool, and
writes rocprofv3's output. See docs/rocprofv3.md.

Options (rocprofv3's names and meanings):
  --pmc COUNTER...               one counter group per occurrence; counters
                                 separated by spaces or commas
  --replay-mode kernel|application
                                 kernel: replay each dispatch once per counter
                                 group collectable on its agent (needs --pmc and
                                 --kernel-replay-beta-enabled); application
                                 (default): run the whole application once per
                                 --pmc group, output in pass_1, pass_2, ...
  --kernel-replay-beta-enabled   acknowledge that kernel replay is experimental
  -d, --output-directory DIR     default %hostname%/%pid% (replayspec-sim/1000)
  -o, --output-file NAME         file name prefix, default %pid% (1000)
  -f, --output-format csv json   default csv
  --kernel-trace, --stats        kernel dispatch trace and kernel statistics
                                 (under kernel replay: one record per pass)
  --att, --pc-sampling-beta-enabled, --pc-sampling-method M, --spm
                                 refused with --replay-mode kernel
  --pid PID, --collection-period P
                                 refused with several --pmc groups

Exit status: 0 written, 1 the run failed, 2 refused options or bad input.

Example:
  replayspec prof --pmc SQ_WAVES SQ_INSTS_VALU TCC_HIT TCC_MISS --replay-mode kernel \
      --kernel-replay-beta-enabled -f csv json -d out -- internal/rocprof/testdata/mi300.yaml
`

func runProf(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" {
			io.WriteString(stdout, profUsage)
			return exitOK
		}
	}
	o, err := rocprof.ParseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec prof: %v\n", err)
		return exitUsage
	}
	warnings, err := o.Check()
	if err != nil {
		for _, e := range profErrors(err) {
			fmt.Fprintf(stderr, "replayspec prof: %v\n", e)
		}
		return exitUsage
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "replayspec prof: warning: %s\n", w)
	}
	s, err := spec.Load(o.Spec)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec prof: %v\n", err)
		return exitUsage
	}
	res, err := rocprof.Run(o, s)
	if err != nil {
		code := exitFail
		var d *rocprof.Diagnostic
		if errors.As(err, &d) {
			code = exitUsage
		}
		for _, e := range profErrors(err) {
			fmt.Fprintf(stderr, "replayspec prof: %v\n", e)
		}
		return code
	}
	paths, err := res.Write()
	if err != nil {
		fmt.Fprintf(stderr, "replayspec prof: %v\n", err)
		return exitFail
	}
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	return exitOK
}

// profErrors lists the errors of an errors.Join, or err itself.
func profErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, profErrors(e)...)
		}
		return out
	}
	return []error{err}
}
