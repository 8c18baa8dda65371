//go:build !mutation

package replay_test

import (
	"slices"
	"testing"
	"time"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
)

// machine is a bare one-agent simulator with a small buffer and a queue,
// no recorder: what the benchmarks measure is the dispatch path itself.
func machine(b *testing.B, setup func(rt *sim.Runtime) *replay.SDK) (hsa.Queue, hsa.Packet) {
	rt, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}}})
	if err != nil {
		b.Fatal(err)
	}
	sdk := setup(rt)
	agent := rt.Agents()[0].ID
	buf, err := rt.Allocate(agent, hsa.DeviceCoarse, 64*4)
	if err != nil {
		b.Fatal(err)
	}
	q, err := rt.CreateQueue(agent)
	if err != nil {
		b.Fatal(err)
	}
	if sdk != nil {
		sdk.Intercept(q)
	}
	p := hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment", Grid: hsa.Dim3{X: 64, Y: 1, Z: 1},
		Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1}, Args: []hsa.Arg{{Buffer: &buf}}}
	return q, p
}

func submitLoop(b *testing.B, q hsa.Queue, p hsa.Packet) {
	ps := []hsa.Packet{p} // made once: the application's packet, not the SDK's cost
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := q.Submit(1, ps...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDispatchBare is the baseline: no SDK on the queue.
func BenchmarkDispatchBare(b *testing.B) {
	q, p := machine(b, func(*sim.Runtime) *replay.SDK { return nil })
	submitLoop(b, q, p)
}

// BenchmarkDispatchSDKIdle: the SDK intercepts the queue but no context is
// started and the replay service is not configured (ACT-4: no tracking
// cost; aim 0 allocs and at most 1.05x bare).
func BenchmarkDispatchSDKIdle(b *testing.B) {
	q, p := machine(b, func(rt *sim.Runtime) *replay.SDK { return replay.New(rt, replay.Options{}) })
	submitLoop(b, q, p)
}

// BenchmarkIdleDispatchSideBySide measures the idle SDK's cost against a
// bare dispatch in one loop: three queues of one machine, one bare, one
// intercepted by an SDK whose replay was never configured (ACT-4), and a
// second bare one as the A/A control, take turns in blocks of 256 small
// dispatches, each block timed; reported as medians over the rounds, per
// dispatch, with the ratios idle/bare (aim: at most 1.05) and
// bare-again/bare (the A/A control: the noise).
func BenchmarkIdleDispatchSideBySide(b *testing.B) {
	rt, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}}})
	if err != nil {
		b.Fatal(err)
	}
	agent := rt.Agents()[0].ID
	buf, err := rt.Allocate(agent, hsa.DeviceCoarse, 64*4)
	if err != nil {
		b.Fatal(err)
	}
	sdk := replay.New(rt, replay.Options{})
	var qs [3]hsa.Queue // bare, idle, bare again
	for i := range qs {
		if qs[i], err = rt.CreateQueue(agent); err != nil {
			b.Fatal(err)
		}
	}
	sdk.Intercept(qs[1])
	ps := []hsa.Packet{{Type: hsa.KernelDispatchPacket, Kernel: "increment", Grid: hsa.Dim3{X: 64, Y: 1, Z: 1},
		Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1}, Args: []hsa.Arg{{Buffer: &buf}}}}
	const block = 256
	run := func(q hsa.Queue) time.Duration {
		start := time.Now()
		for range block {
			if err := q.Submit(1, ps...); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	for _, q := range qs { // warm-up
		run(q)
	}
	b.ReportAllocs()
	b.ResetTimer()
	rounds := max(b.N/block, 1)
	took := make([][3]time.Duration, rounds)
	for r := range rounds {
		for k := range qs {
			i := (k + r) % len(qs) // each queue goes first in turn
			took[r][i] = run(qs[i])
		}
	}
	b.StopTimer()
	// Medians over the rounds: a burst of load on the shared machine
	// spoils a round, not the figure.
	median := func(f func(t [3]time.Duration) float64) float64 {
		xs := make([]float64, rounds)
		for r, t := range took {
			xs[r] = f(t)
		}
		slices.Sort(xs)
		return xs[rounds/2]
	}
	perDispatch := func(i int) float64 {
		return median(func(t [3]time.Duration) float64 { return float64(t[i].Nanoseconds()) / block })
	}
	b.ReportMetric(perDispatch(0), "bare-ns")
	b.ReportMetric(perDispatch(1), "idle-ns")
	b.ReportMetric(perDispatch(2), "bare-again-ns")
	b.ReportMetric(median(func(t [3]time.Duration) float64 { return float64(t[1]) / float64(t[0]) }), "idle/bare")
	b.ReportMetric(median(func(t [3]time.Duration) float64 { return float64(t[2]) / float64(t[0]) }), "bare-A/A")
}

// BenchmarkReplayPasses: a fixed loop of 1000 passes of a small kernel per
// op; reports passes per second.
func BenchmarkReplayPasses(b *testing.B) {
	const passes = 1000
	q, p := machine(b, func(rt *sim.Runtime) *replay.SDK {
		sdk := replay.New(rt, replay.Options{})
		ctx, _ := sdk.CreateContext()
		count := func(replay.DispatchInfo, replay.UserData) uint64 { return passes }
		sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, func(rec replay.CallbackRecord, _ *replay.UserData) {
			if rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter {
				rec.Payload.ReplayPassCount = count
			}
		})
		sdk.StartContext(ctx)
		return sdk
	})
	submitLoop(b, q, p)
	b.ReportMetric(float64(b.N*passes)/b.Elapsed().Seconds(), "passes/s")
}
