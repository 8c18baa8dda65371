// Command cudabench checks the CUDA target on a real GPU and measures what
// kernel replay costs there: it (a) checks every library kernel's effect,
// (b) proves that restore is real by replaying an increment four times, and
// (c) times snapshot and restore against plain copies and launches. Device
// work is timed with CUDA events around the device operations alone (a gate
// kernel holds the stream until the host has enqueued them); what costs host
// time by nature is timed with events that bracket the host's calls and with
// the host clock. Each figure is the median and the minimum of -reps (or
// -pass-reps) samples after warm-up. It prints one Markdown table; it exits
// non-zero if a check fails. scripts/gpu-check.sh builds and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/cuda"
	"github.com/replayspec/replayspec/hsa"
)

func main() {
	bigMiB := flag.Uint64("mib", 1024, "size of the large buffer for bandwidth and write-set figures, MiB")
	reps := flag.Int("reps", 30, "samples of each copy and restore figure after warm-up (median and min reported)")
	passReps := flag.Int("pass-reps", 200, "samples of the per-pass overhead figures after warm-up (median and min reported)")
	ncuDir := flag.String("ncu", "", "folder of Nsight Compute runs of -ncu-target (NAME.csv, NAME.log, NAME.app): replay the same kernel with the same metric sets and compare")
	target := flag.Bool("ncu-target", false, "be the program Nsight Compute profiles: one increment over 1% of -mib, timed, checked, then exit")
	groupsOf := flag.String("groups", "", "print the single-pass groups of these comma-separated metrics and exit")
	only := flag.String("only", "", "run only these parts, comma-separated: checks,copies,restore,patterns,fixed,host,counters (default all)")
	cacheControl := flag.String("cache-control", "all", "caches before each counted pass: all (flushed, as Nsight Compute does) or none")
	flag.Parse()
	if *reps < 1 || *passReps < 1 {
		fmt.Fprintln(os.Stderr, "cudabench: -reps and -pass-reps must be at least 1")
		os.Exit(2)
	}

	cc, err := cuda.ParseCacheControl(*cacheControl)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabench:", err)
		os.Exit(2)
	}
	rt, err := cuda.OpenWith(nil, cuda.Options{CacheControl: cc})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabench:", err)
		os.Exit(2)
	}
	defer rt.Close()
	if *target {
		if err := ncuTarget(rt, *bigMiB<<20); err != nil {
			fmt.Fprintln(os.Stderr, "cudabench:", err)
			os.Exit(1)
		}
		return
	}
	if *groupsOf != "" {
		os.Exit(printGroups(rt, strings.Split(*groupsOf, ",")))
	}
	b, err := newBench(rt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabench:", err)
		os.Exit(1)
	}
	agent := rt.Agents()[0]
	fmt.Printf("Device: %s (%s); %d samples per copy/restore figure, %d per per-pass figure, after %d warm-up runs\n\n",
		agent.Name, agent.Arch, *reps, *passReps, warmUp)

	t := &table{}
	want := func(part string) bool { return *only == "" || strings.Contains(","+*only+",", ","+part+",") }
	failed := false
	if want("checks") {
		failed = b.checkKernels(t)
		failed = b.proveRestore(t) || failed
	}
	if want("copies") || want("restore") {
		if err := b.measure(t, *bigMiB<<20, *reps, *passReps); err != nil {
			t.row("measurement", "error: "+err.Error(), "", "")
			failed = true
		}
	}
	if want("patterns") {
		if err := b.restorePatterns(t, *bigMiB<<20, *reps); err != nil {
			t.row("restore patterns", "error: "+err.Error(), "", "")
			failed = true
		}
	}
	if want("fixed") {
		if err := b.restoreCosts(t, *bigMiB<<20, *reps); err != nil {
			t.row("first restore and fixed costs", "error: "+err.Error(), "", "")
			failed = true
		}
	}
	if want("host") {
		if err := hostPath(t, rt, *passReps); err != nil {
			t.row("host path", "error: "+err.Error(), "", "")
			failed = true
		}
	}
	if want("counters") {
		if ok, why := rt.CountersAvailable(); !ok {
			t.row("real counters", "unavailable: "+why.Error(), "", "")
		} else if *ncuDir == "" {
			t.row("counters vs Nsight Compute", "skipped: no -ncu folder", "", "")
		} else if err := b.counterBench(t, *ncuDir, *bigMiB<<20, 5); err != nil {
			t.row("counters vs Nsight Compute", "error: "+err.Error(), "", "")
			failed = true
		}
	}
	failed = failed || b.failed
	if len(b.ungated) > 0 {
		var names []string
		for n := range b.ungated {
			names = append(names, n)
		}
		sort.Strings(names)
		t.row("timed without the gate (the call waited for the device; host gaps included)", strings.Join(names, ", "), "", "")
	}
	t.print(os.Stdout)
	if failed {
		os.Exit(1)
	}
}

// bench holds the runtime, one queue and the device timer.
type bench struct {
	rt    *cuda.Runtime
	q     hsa.Queue
	timer *cuda.DeviceTimer

	ungated map[string]bool // figures whose timed call defeated the gate
	failed  bool            // a check inside a measurement failed
}

func newBench(rt *cuda.Runtime) (*bench, error) {
	q, err := rt.CreateQueue(rt.Agents()[0].ID)
	if err != nil {
		return nil, err
	}
	timer, err := rt.NewDeviceTimer()
	if err != nil {
		return nil, err
	}
	return &bench{rt: rt, q: q, timer: timer, ungated: map[string]bool{}}, nil
}

// printGroups is -groups: how the agent splits metrics into passes.
func printGroups(rt *cuda.Runtime, metrics []string) int {
	if ok, why := rt.CountersAvailable(); !ok {
		fmt.Fprintln(os.Stderr, "cudabench: counters:", why)
		return 2
	}
	g, err := rt.CounterGroups(metrics)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabench:", err)
		return 1
	}
	n, err := rt.CounterPasses(metrics)
	fmt.Printf("%d groups (CUPTI's own schedule: %d passes, %v)\n", len(g), n, err)
	for i, grp := range g {
		fmt.Printf("pass %d: %s\n", i, strings.Join(grp, " "))
	}
	return 0
}
