package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/replayspec/replayspec/internal/rocprof"
)

func init() {
	register(command{name: "check-rocprofv3", summary: "check a rocprofv3 output directory (ours or a real one) against RPV-3/5/6/8", run: runCheckRocprof})
}

const checkRocprofUsage = `Usage: replayspec check-rocprofv3 [--invariant COUNTER]... DIR

Checks every *results.json and *counter_collection.csv under DIR, as written
by rocprofv3 or by 'replayspec prof':
  RPV-8  under kernel replay every dispatch id has replay_pass 0..N-1 exactly
         once, all dispatches of an agent have the same N, dispatch ids are
         non-zero and contiguous, and counters that do not depend on the pass
         (SQ_WAVES, SQ_INSTS_*) are equal across the passes of a dispatch
  RPV-3  pass i collects the same counter group on every dispatch of an agent
  RPV-6  under kernel replay every JSON counter record has replay_pass; the
         CSV has the reference's columns and no Replay_Pass column
  RPV-5  application replay folders are pass_1, pass_2, ... without a gap

Options:
  --invariant COUNTER   also treat COUNTER as pass-independent (repeatable),
                        e.g. GRBM_COUNT on the simulator

Exit status: 0 no problem, 1 problems found, 2 DIR unreadable or without
rocprofv3 output.
`

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runCheckRocprof(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check-rocprofv3", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var invariant stringList
	fs.Var(&invariant, "invariant", "pass-independent counter")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, checkRocprofUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "replayspec check-rocprofv3: %v\n\n%s", err, checkRocprofUsage)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "replayspec check-rocprofv3: want one output directory, got %d arguments\n\n%s", fs.NArg(), checkRocprofUsage)
		return exitUsage
	}
	dir := fs.Arg(0)
	opts := rocprof.ValidateOptions{}
	if len(invariant) > 0 {
		extra := map[string]bool{}
		for _, c := range invariant {
			extra[c] = true
		}
		opts.PassIndependent = func(name string) bool { return extra[name] || rocprof.PassIndependent(name) }
	}
	checked, problems, err := rocprof.ValidateDir(dir, opts)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec check-rocprofv3: %v\n", err)
		return exitUsage
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p.String())
	}
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "%s: %d problem(s) in %d file(s) checked\n", dir, len(problems), len(checked))
		return exitFail
	}
	fmt.Fprintf(stdout, "%s: %d file(s) checked, no problem (%s)\n", dir, len(checked), strings.Join(checked, ", "))
	return exitOK
}
