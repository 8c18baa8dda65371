package sim

import (
	"runtime"
	"testing"

	"github.com/replayspec/replayspec/internal/hsa"
)

// BenchmarkBareDispatch is the cost of one tiny dispatch with no
// interceptor and no recorder: the path every non-replayed dispatch takes
// (ACT-4 wants it free of tracking work).
func BenchmarkBareDispatch(b *testing.B) {
	rt, err := New(Config{Agents: []AgentConfig{{Kind: "MI300"}}})
	if err != nil {
		b.Fatal(err)
	}
	q, _ := rt.CreateQueue(1)
	x, _ := rt.Allocate(1, hsa.DeviceCoarse, 64*4)
	packets := []hsa.Packet{dispatch("increment", 64, buf(x))}
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Submit(1, packets...); err != nil {
			b.Fatal(err)
		}
	}
}

const benchTracked = 1 << 30 // 1 GiB tracked by the snapshot

// restoreBench restores a 1 GiB snapshot after dirty() wrote 1% of it.
func restoreBench(b *testing.B, cfg Config, dirty func(rt *Runtime, a hsa.Allocation) error) {
	cfg.Agents = []AgentConfig{{Kind: "MI300"}}
	rt, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	a, err := rt.Allocate(1, hsa.DeviceCoarse, benchTracked)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := rt.Snapshot(0, 1, []hsa.Allocation{a})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		snap.Release()
		_ = rt.Free(a)
		runtime.GC() // give the 2 GiB back before the next benchmark
	})
	b.SetBytes(benchTracked)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := dirty(rt, a); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := snap.Restore(); err != nil {
			b.Fatal(err)
		}
	}
}

// writeOnePct writes 1% of the allocation as runs of run bytes spread
// evenly over it.
func writeOnePct(run uint64) func(rt *Runtime, a hsa.Allocation) error {
	data := make([]byte, run)
	for i := range data {
		data[i] = 0xff
	}
	return func(rt *Runtime, a hsa.Allocation) error {
		for off := uint64(0); off+run <= a.Size; off += 100 * run {
			if err := rt.Write(a, off, data); err != nil {
				return err
			}
		}
		return nil
	}
}

// A kernel's output: 1% written as 64 KiB runs, the way kernels write
// whole buffers.
func BenchmarkRestoreDirty1Pct1GiB(b *testing.B) {
	restoreBench(b, Config{}, writeOnePct(64<<10))
}

// The worst case for page tracking: every 100th 4 KiB page written.
func BenchmarkRestoreDirty1PctScattered1GiB(b *testing.B) {
	restoreBench(b, Config{}, writeOnePct(pageSize))
}

// The baseline: a runtime without dirty tracking restores every byte.
func BenchmarkRestoreFull1GiB(b *testing.B) {
	restoreBench(b, Config{RestoreAll: true}, writeOnePct(64<<10))
}
