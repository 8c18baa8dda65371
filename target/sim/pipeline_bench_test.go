package simtarget_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target/sim"
)

// The whole pipeline on the simulator: spec -> engine and harness ->
// recorder -> oracles and expectations, as `replayspec run` does it.
// docs/benchmarks.md records these figures and the commands.

// shape is what a scaling benchmark varies.
type shape struct {
	passes     uint64 // per dispatch; 0 with forever: a never-ending loop
	forever    bool   // continue always: the loop spends the pass budget
	dispatches int    // in one spec, spread over the threads
	threads    int
	elements   uint64 // 32-bit elements of the one buffer every dispatch uses
	specs      int    // run this many copies of the spec in one run (runner.RunAll)
	stream     bool   // judge the events as they are recorded (runner.Options.Stream)
	repeat     bool   // the dispatches as one repeated dispatch per thread (spec.Dispatch.Repeat), not listed
	expect     bool   // with expectations of every kind a stream judges apart or adds up (withExpectations)
	counts     bool   // a never-ending loop expected to: with counts added up over the run (withCounts)
}

// shapedSpec builds a spec of that shape: one MI300 agent, a replay
// context and a kernel trace context, one buffer, the increment kernel.
// (A buffer per thread would make every snapshot save them all: replay
// saves the agent's whole device memory, MEM-4, so that curve would
// measure the snapshot's size, not the threads.)
func shapedSpec(sh shape) spec.Spec {
	s := spec.Spec{Version: spec.Version, Name: "scale",
		Agents: []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: []spec.Context{
			{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}},
			{Name: "timing", Services: spec.Services{KernelTrace: &spec.Empty{}}},
		},
	}
	if sh.forever {
		s.Tool.Plan.Passes = "0"
		s.Tool.Plan.Continue = &spec.ContinuePolicy{Always: true}
		s.Limits.MaxPasses = sh.passes
	} else {
		s.Tool.Plan.Passes = spec.Passes(strconv.FormatUint(sh.passes, 10))
	}
	threads := max(sh.threads, 1)
	s.Application.Buffers = []spec.Buffer{{Name: "x", Agent: "gpu0", Elements: sh.elements, Fill: 1}}
	if sh.repeat {
		for th := range threads {
			n := sh.dispatches / threads
			if th < sh.dispatches%threads {
				n++
			}
			if n > 0 {
				s.Application.Dispatches = append(s.Application.Dispatches, spec.Dispatch{Name: fmt.Sprintf("d%d", th),
					Kernel: "increment", Agent: "gpu0", Thread: uint64(th + 1), Args: []string{"x"}, Repeat: uint64(n)})
			}
		}
		return withExpectations(s, sh)
	}
	if sh.counts {
		return withCounts(s, sh)
	}
	for i := range max(sh.dispatches, 1) {
		s.Application.Dispatches = append(s.Application.Dispatches, spec.Dispatch{Name: fmt.Sprintf("d%d", i),
			Kernel: "increment", Agent: "gpu0", Thread: uint64(i%threads + 1), Args: []string{"x"}})
	}
	return withExpectations(s, sh)
}

// withExpectations gives s, of shape sh, when sh.expect is set,
// expectations that hold: about the first dispatch and the last (passes,
// completions, records), judged in their segments, and over the run
// (records, a status, the buffer's final contents), added up over
// segments. Not for a never-ending loop.
func withExpectations(s spec.Spec, sh shape) spec.Spec {
	if !sh.expect {
		return s
	}
	ds := s.Application.Dispatches
	first, last := ds[0].Name, ds[len(ds)-1].Name
	if sh.repeat {
		first, last = spec.RepetitionLabel(first, 0), spec.RepetitionLabel(last, ds[len(ds)-1].Repeat-1)
	}
	n := uint64(max(sh.dispatches, 1))
	final := int64(1 + n) // each dispatch adds one: memory is restored before every later pass
	s.Expect = spec.Expect{
		Passes:       map[string]spec.Count{first: spec.Exactly(sh.passes), last: spec.Exactly(sh.passes)},
		Completions:  map[string]spec.Count{first: spec.Exactly(1), last: spec.Exactly(1)},
		Records:      map[string]spec.Count{"kernel_trace": spec.Exactly(n * sh.passes)},
		Statuses:     []spec.StatusExpect{{Call: "configure_callback_tracing", Status: "SUCCESS"}},
		Memory:       map[string]spec.MemoryExpect{"x": {All: &final}},
		RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Dispatch: last, Count: spec.Exactly(sh.passes)}},
	}
	return s // a label that is not the trace's fails the run (runShapeAs): a dispatch not found
}

// withCounts gives s, a never-ending loop of sh.passes passes, the
// expectations that it never ends and what adds events up over the run:
// a record a pass, in all and in one pass, a status, no warning. The loop
// is judged in parts, its passes counted as they are left out (check's
// expectJudge.hidden); before, these expectations held it whole.
func withCounts(s spec.Spec, sh shape) spec.Spec {
	s.Application.Dispatches = []spec.Dispatch{{Name: "d0", Kernel: "increment", Agent: "gpu0", Thread: 1, Args: []string{"x"}}}
	seven := uint64(7)
	s.Expect = spec.Expect{NeverEnds: []string{"d0"},
		Records: map[string]spec.Count{"kernel_trace": spec.Exactly(sh.passes)},
		RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Count: spec.Exactly(sh.passes)},
			{Service: "kernel_trace", Pass: &seven, Count: spec.Exactly(1)}},
		Statuses:   []spec.StatusExpect{{Call: "configure_callback_tracing", Status: "SUCCESS"}},
		NoWarnings: true}
	return s
}

// runShape runs the spec through the pipeline and fails on anything but
// a clean pass (a never-ending loop is judged as such, CMP-4).
func runShape(b *testing.B, s spec.Spec) runner.Result {
	return runShapeAs(b, s, false)
}

// runShapeAs is runShape, judging the events as they are recorded when
// stream is set (runner.Options.Stream); it fails unless they were.
func runShapeAs(b *testing.B, s spec.Spec, stream bool) runner.Result {
	r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}, Timeout: time.Hour, Stream: stream}) // a figure, not a test of time: the default 60 s cuts 100,000 dispatches on a loaded machine
	if r.Err != nil || len(r.Violations) > 0 {
		b.Fatalf("%s: err %v, violations %v", s.Name, r.Err, r.Violations)
	}
	if stream && r.Tally == nil {
		b.Fatalf("%s: not judged as a stream (check.Stream found it not separable)", s.Name)
	}
	return r
}

// runSpecs runs n copies of s in one run, as `replayspec run` runs a
// library, and fails unless every one passes.
func runSpecs(b *testing.B, s spec.Spec, n int) {
	specs := make([]spec.Spec, n)
	for i := range specs {
		specs[i] = s
		specs[i].Name = fmt.Sprintf("%s-%d", s.Name, i)
	}
	for _, r := range runner.RunAll(context.Background(), specs, runner.Options{Target: simtarget.Sim{}}, nil) {
		if r.Verdict() != runner.Pass {
			b.Fatalf("%s: %s: %v %v", r.Spec.Name, r.Verdict(), r.Err, r.Violations)
		}
	}
}

// peakRSS reports the process's peak resident memory so far (MiB). Run one
// sub-benchmark per process (scripts/scale.sh) to read it per point.
func peakRSS(b *testing.B) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	}
}

// cpuTime is the process's CPU time so far (user and system, every
// thread): on a shared machine it moves less with the load than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScaleStreamed: BenchmarkScale's dispatches and never-ending
// loop with the events judged as they are recorded and not kept
// (runner.Options.Stream, issue 23 item 1).
func BenchmarkScaleStreamed(b *testing.B) {
	var points []scalePoint
	for _, n := range []int{1000, 10_000, 30_000, 100_000, 1_000_000} {
		points = append(points, scalePoint{fmt.Sprintf("dispatches=%d", n), shape{passes: 3, dispatches: n, elements: 64, stream: true}, float64(n)})
	}
	for _, n := range []uint64{1000, 10_000, 100_000} {
		points = append(points, scalePoint{fmt.Sprintf("forever-passes=%d", n), shape{passes: n, forever: true, elements: 64, stream: true}, float64(n)})
	}
	// The same dispatches written as one repeated dispatch (repeat: N):
	// the spec stays one entry, so memory is flat in N (issue 23 item 4);
	// and with expectations, judged as the stream goes (item 1).
	for _, n := range []int{1000, 10_000, 100_000, 300_000, 1_000_000} {
		points = append(points, scalePoint{fmt.Sprintf("repeat=%d", n), shape{passes: 3, dispatches: n, elements: 64, stream: true, repeat: true}, float64(n)})
	}
	for _, n := range []int{1000, 10_000, 100_000, 1_000_000} {
		points = append(points, scalePoint{fmt.Sprintf("repeat-expect=%d", n), shape{passes: 3, dispatches: n, elements: 64, stream: true, repeat: true, expect: true}, float64(n)})
	}
	for _, n := range []uint64{1000, 10_000, 100_000} {
		points = append(points, scalePoint{fmt.Sprintf("forever-counts=%d", n), shape{passes: n, forever: true, elements: 64, stream: true, counts: true}, float64(n)})
	}
	runPoints(b, points)
}

// BenchmarkPipelinePass: a fixed loop of 1000 passes of a 64-element
// kernel, the whole pipeline; per pass. The engine alone:
// replay BenchmarkReplayPasses.
func BenchmarkPipelinePass(b *testing.B) { benchPipelinePasses(b, false, false) }

// benchPipelinePasses runs the 1000-pass spec through the pipeline,
// streamed or not, with expectations or not, and reports per pass.
func benchPipelinePasses(b *testing.B, stream, expect bool) {
	const passes = 1000
	s := shapedSpec(shape{passes: passes, elements: 64, expect: expect})
	if expect {
		// The expectations are judged: one record more than ran fails.
		wrong := s
		wrong.Expect.Records = map[string]spec.Count{"kernel_trace": spec.Exactly(passes + 1)}
		if r := runner.Run(context.Background(), wrong, runner.Options{Target: simtarget.Sim{}, Stream: stream}); len(r.Violations) == 0 {
			b.Fatalf("expect.records of %d passed a run of %d passes", passes+1, passes)
		}
	}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		runShapeAs(b, s, stream)
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*passes), "cpu-ns/pass")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*passes), "ns/pass")
	b.ReportMetric(float64(b.N*passes)/b.Elapsed().Seconds(), "passes/s")
}

// BenchmarkPipelinePassStreamed is BenchmarkPipelinePass as `replayspec
// run` runs that spec: it has no expectations and nothing asks for the
// events, so they are judged as they are recorded (runner.Options.Stream)
// and no trace is kept.
func BenchmarkPipelinePassStreamed(b *testing.B) { benchPipelinePasses(b, true, false) }

// BenchmarkPipelinePassExpect is BenchmarkPipelinePass with expectations
// (withExpectations), held: how a spec with expectations was judged
// before they were judged as a stream, and how it is when its events are
// asked for (--trace-out, --golden, --timeline, --html).
func BenchmarkPipelinePassExpect(b *testing.B) { benchPipelinePasses(b, false, true) }

// BenchmarkPipelinePassStreamedExpect is BenchmarkPipelinePassExpect as
// `replayspec run` runs it now: the expectations judged as the events are
// recorded, none kept.
func BenchmarkPipelinePassStreamedExpect(b *testing.B) { benchPipelinePasses(b, true, true) }

// engineLoop is the engine alone: a fixed loop of passes of the same small
// kernel through the SDK on the simulator, no recorder, no harness, no
// oracles (as replay's BenchmarkReplayPasses).
func engineLoop(b *testing.B, passes uint64) func() {
	rt, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}}})
	if err != nil {
		b.Fatal(err)
	}
	agent := rt.Agents()[0].ID
	buf, err := rt.Allocate(agent, hsa.DeviceCoarse, 64*4)
	if err != nil {
		b.Fatal(err)
	}
	q, err := rt.CreateQueue(agent)
	if err != nil {
		b.Fatal(err)
	}
	sdk := replay.New(rt, replay.Options{})
	ctx, _ := sdk.CreateContext()
	sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, func(rec replay.CallbackRecord, _ *replay.UserData) {
		if rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter {
			rec.Payload.ReplayPassCount = func(replay.DispatchInfo, replay.UserData) uint64 { return passes }
		}
	})
	sdk.StartContext(ctx)
	sdk.Intercept(q)
	ps := []hsa.Packet{{Type: hsa.KernelDispatchPacket, Kernel: "increment", Grid: hsa.Dim3{X: 64, Y: 1, Z: 1},
		Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1}, Args: []hsa.Arg{{Buffer: &buf}}}}
	return func() {
		if err := q.Submit(1, ps...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPipelineBesideEngine: the whole pipeline and the engine alone,
// 1000 passes each, side by side in one loop (each round times the
// pipeline, the engine, and the pipeline again as the A/A control);
// medians over the rounds, per pass.
func BenchmarkPipelineBesideEngine(b *testing.B) {
	const passes = 1000
	s := shapedSpec(shape{passes: passes, elements: 64})
	engine := engineLoop(b, passes)
	pipeline := func() { runShape(b, s) }
	jobs := []func(){pipeline, engine, pipeline}
	for _, f := range jobs { // warm-up
		f()
	}
	took := make([][3]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for r := range b.N {
		for k := range jobs {
			i := (k + r) % len(jobs) // each goes first in turn
			start := time.Now()
			jobs[i]()
			took[r][i] = time.Since(start)
		}
	}
	b.StopTimer()
	median := func(f func(t [3]time.Duration) float64) float64 {
		xs := make([]float64, len(took))
		for r, t := range took {
			xs[r] = f(t)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	perPass := func(i int) float64 {
		return median(func(t [3]time.Duration) float64 { return float64(t[i].Nanoseconds()) / passes })
	}
	b.ReportMetric(perPass(0), "pipeline-ns/pass")
	b.ReportMetric(perPass(1), "engine-ns/pass")
	b.ReportMetric(perPass(2), "pipeline-again-ns/pass")
	b.ReportMetric(median(func(t [3]time.Duration) float64 { return float64(t[0]) / float64(t[1]) }), "pipeline/engine")
	b.ReportMetric(median(func(t [3]time.Duration) float64 { return float64(t[2]) / float64(t[0]) }), "pipeline-A/A")
}

// BenchmarkScale: time per unit and peak memory as one dimension grows.
func BenchmarkScale(b *testing.B) {
	var points []scalePoint
	for _, n := range []int{1, 10, 100, 1000, 10_000, 100_000} {
		points = append(points, scalePoint{fmt.Sprintf("dispatches=%d", n), shape{passes: 3, dispatches: n, elements: 64}, float64(n)})
	}
	for _, n := range []int{1, 10, 100, 1000, 10_000} {
		points = append(points, scalePoint{fmt.Sprintf("threads=%d", n), shape{passes: 3, dispatches: n, threads: n, elements: 64}, float64(n)})
	}
	for _, n := range []uint64{10, 100, 1000, 10_000, 100_000} {
		points = append(points, scalePoint{fmt.Sprintf("forever-passes=%d", n), shape{passes: n, forever: true, elements: 64}, float64(n)})
	}
	for _, kib := range []uint64{4, 64, 1024, 16 << 10, 64 << 10} {
		points = append(points, scalePoint{fmt.Sprintf("buffer-KiB=%d", kib), shape{passes: 10, elements: kib * 256}, 10})
	}
	for _, n := range []int{1, 10, 100, 1000} {
		points = append(points, scalePoint{fmt.Sprintf("specs=%d", n), shape{passes: 3, elements: 64, specs: n}, float64(n)})
	}
	runPoints(b, points)
}

// scalePoint is one point of a scaling curve: the shape, and the unit
// ns/unit divides by.
type scalePoint struct {
	name string
	sh   shape
	unit float64
}

// runPoints runs each point as a sub-benchmark: CPU and wall time per
// unit, and the process's peak RSS so far.
func runPoints(b *testing.B, points []scalePoint) {
	for _, p := range points {
		b.Run(p.name, func(b *testing.B) {
			s := shapedSpec(p.sh)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if p.sh.specs > 0 {
					runSpecs(b, s, p.sh.specs)
					continue
				}
				runShapeAs(b, s, p.sh.stream)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/(float64(b.N)*p.unit), "cpu-ns/unit")
			b.ReportMetric(b.Elapsed().Seconds()*1e9/(float64(b.N)*p.unit), "ns/unit")
			peakRSS(b)
		})
	}
}
