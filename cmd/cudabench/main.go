// Command cudabench checks the CUDA target on a real GPU and measures what
// kernel replay costs there: it (a) checks every library kernel's effect,
// (b) proves that restore is real by replaying an increment four times, and
// (c) times snapshot and restore against plain copies and launches with CUDA
// events. It prints one Markdown table; it exits non-zero if a check fails.
// scripts/gpu-check.sh builds and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/replayspec/replayspec/cuda"
	"github.com/replayspec/replayspec/hsa"
)

func main() {
	bigMiB := flag.Uint64("mib", 1024, "size of the large buffer for bandwidth and write-set figures, MiB")
	reps := flag.Int("reps", 50, "repetitions of the per-pass overhead measurement (median taken)")
	flag.Parse()

	rt, err := cuda.Open(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabench:", err)
		os.Exit(2)
	}
	defer rt.Close()
	b, err := newBench(rt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabench:", err)
		os.Exit(1)
	}
	agent := rt.Agents()[0]
	fmt.Printf("Device: %s (%s)\n\n", agent.Name, agent.Arch)

	t := &table{}
	failed := b.checkKernels(t)
	failed = b.proveRestore(t) || failed
	if err := b.measure(t, *bigMiB<<20, *reps); err != nil {
		t.row("measurement", "error: "+err.Error(), "")
		failed = true
	}
	t.print(os.Stdout)
	if failed {
		os.Exit(1)
	}
}

// bench holds the runtime and one queue.
type bench struct {
	rt *cuda.Runtime
	q  hsa.Queue

	lastHost, bestHost time.Duration // host time in the last timed run, and in best's pick
}

func newBench(rt *cuda.Runtime) (*bench, error) {
	q, err := rt.CreateQueue(rt.Agents()[0].ID)
	if err != nil {
		return nil, err
	}
	return &bench{rt: rt, q: q}, nil
}
