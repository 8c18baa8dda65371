package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/replayspec/replayspec/rocprof"
)

func init() {
	register(command{name: "check-rocprofv3", summary: "check a rocprofv3 output directory (ours or a real one) against RPV-3/5/6/8/9 and DID-4", run: runCheckRocprof})
}

const checkRocprofUsage = `Usage: replayspec check-rocprofv3 [--pmc COUNTER...]... [--invariant COUNTER]... DIR

Checks every *results.json and every CSV file rocprofv3 writes
(*counter_collection.csv, *kernel_trace.csv, *agent_info.csv, *kernel_stats.csv,
*domain_stats.csv) under DIR, as written by rocprofv3 or by 'replayspec prof':
  RPV-8  every replayed dispatch has replay_pass 0..N-1 exactly once, all
         replayed dispatches of an agent have the same N, records sharing a
         dispatch id are one dispatch, a dispatch has as many kernel dispatch
         records as counter records, dispatch ids are non-zero and contiguous
         where the file can show it, and counters that do not depend on the
         pass (SQ_WAVES, SQ_INSTS_*) are equal across the passes of a dispatch
  RPV-3  pass i collects counter group i of the agent, in order, every
         requested counter, no pass beyond the last group; not every value 0
  RPV-6  under kernel replay every JSON counter record has replay_pass; the
         CSV has the reference's columns and no Replay_Pass column
  RPV-5  the runs' folders are pass_1, pass_2, ... (pmc_N for a text input
         file's jobs, numbered with them) without a gap
  RPV-9  the files are laid out as rocprofv3's writer lays them out: CSV text
         fields quoted and numbers bare, counter values with 6 decimals from
         1 up and in 8-digit scientific form below, statistics in their forms,
         Agent_Id "Agent N"; results.json's keys in the writer's order,
         counter values written as doubles

  RPV-9  also: counter and agent ids listed once, every record on a listed
         agent, its counter ids listed for that agent
  RPV-3  also: no negative hardware counter value
  DID-4  the passes of a replayed dispatch have their own timestamps

The requested groups come from the PREFIX_config.json beside each
results.json (rocprofv3 --output-config writes it); --pmc gives them when
there is none. Without either, the passes of a replayed dispatch must
together collect every counter the file lists for its agent (rocprofv3 lists
only the requested ones), and each pass must collect a counter of its own.
Gaps left by kernel filters are accepted. A dispatch that ran once
(replay_pass 0) where its agent needs several passes is a note, not a
problem: a declined dispatch (a graph launch, a multi-packet submission, a
failed snapshot) and a replay that never started look the same in the files.

Options:
  --pmc COUNTER...      one requested counter group (repeatable, in order)
  --invariant COUNTER   also treat COUNTER as pass-independent (repeatable),
                        e.g. GRBM_COUNT on the simulator

Exit status: 0 no problem (notes only), 1 problems found, 2 DIR unreadable or
without rocprofv3 output.
`

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runCheckRocprof(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	// --pmc takes the words up to the next option, as rocprofv3's does.
	var groups [][]string
	var rest []string
	split := func(w string) []string {
		return strings.FieldsFunc(w, func(r rune) bool { return r == ',' || r == ' ' })
	}
	for i := 0; i < len(args); i++ {
		if v, ok := strings.CutPrefix(args[i], "--pmc="); ok {
			if len(split(v)) == 0 {
				fmt.Fprintf(stderr, "replayspec check-rocprofv3: --pmc needs at least one counter\n\n%s", checkRocprofUsage)
				return exitUsage
			}
			groups = append(groups, split(v))
			continue
		}
		if args[i] != "--pmc" {
			rest = append(rest, args[i])
			continue
		}
		// The last word is DIR, never a counter.
		var g []string
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !(i+2 == len(args) && len(g) > 0) {
			i++
			g = append(g, split(args[i])...)
		}
		if len(g) == 0 {
			fmt.Fprintf(stderr, "replayspec check-rocprofv3: --pmc needs at least one counter\n\n%s", checkRocprofUsage)
			return exitUsage
		}
		groups = append(groups, g)
	}
	fs := flag.NewFlagSet("check-rocprofv3", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var invariant stringList
	fs.Var(&invariant, "invariant", "pass-independent counter")
	if err := fs.Parse(rest); err != nil {
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
	opts := rocprof.ValidateOptions{Groups: groups}
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
	failures := rocprof.Failures(problems)
	notes := ""
	if n := len(problems) - len(failures); n > 0 {
		notes = fmt.Sprintf(", %d note(s) on what the files cannot decide", n)
	}
	if len(failures) > 0 {
		fmt.Fprintf(stdout, "%s: %d problem(s) in %d file(s) checked%s\n", dir, len(failures), len(checked), notes)
		return exitFail
	}
	fmt.Fprintf(stdout, "%s: %d file(s) checked, no problem%s (%s)\n", dir, len(checked), notes, strings.Join(checked, ", "))
	return exitOK
}
