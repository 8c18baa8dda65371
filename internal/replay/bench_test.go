package replay_test

import (
	"testing"

	"github.com/replayspec/replayspec/internal/hsa"
	"github.com/replayspec/replayspec/internal/replay"
	"github.com/replayspec/replayspec/internal/sim"
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
