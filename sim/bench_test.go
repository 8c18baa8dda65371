package sim

import (
	"runtime"
	"testing"
	"time"

	"github.com/replayspec/replayspec/hsa"
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

// writeOnePct writes 1% of the allocation as runs of run bytes spread
// evenly over it, as a kernel's output would.
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

// snapshotted is a runtime with 1 GiB allocated, written once (so that no
// page is first touched inside a timed restore) and snapshotted.
func snapshotted(b *testing.B, cfg Config) (*Runtime, hsa.Allocation, *snapshot) {
	cfg.Agents = []AgentConfig{{Kind: "MI300"}}
	rt, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	a, err := rt.Allocate(1, hsa.DeviceCoarse, benchTracked)
	if err != nil {
		b.Fatal(err)
	}
	if err := rt.WriteWith(a, func(dst []byte) {
		for i := range dst {
			dst[i] = byte(i)
		}
	}); err != nil {
		b.Fatal(err)
	}
	snap, err := rt.Snapshot(0, 1, []hsa.Allocation{a})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		snap.Release()
		_ = rt.Free(a)
		runtime.GC() // give the memory back before the next benchmark
	})
	return rt, a, snap.(*snapshot)
}

// evict pushes the caches out: a read of 128 MiB, four times the last
// level cache, so that every timed operation starts cold (a read, so that
// no timed operation pays for writing the scratch's lines back).
func evict(scratch []byte) {
	var sum byte
	for i := 0; i < len(scratch); i += 64 {
		sum += scratch[i]
	}
	evicted = sum
}

var evicted byte // keeps evict's reads

// BenchmarkRestore1GiB compares restores side by side in one loop, each
// round timing every variant once, caches cold before each:
//   - copy: one plain copy of the whole 1 GiB region from the snapshot (of
//     the same memory the full restore writes), the fastest plain way to
//     write it back: the baseline, timed twice a round, its second timing
//     against its first (copy-A/A) showing the noise;
//   - full: the simulator's restore without dirty tracking
//     (Config.RestoreAll);
//   - dirty: the restore after 1% was written in 64 KiB runs, and
//     scattered: after every 100th 4 KiB page was written.
//
// Metrics: ms per variant, GB/s as bytes moved (1 GiB for copy and full,
// the ~10 MiB restored for dirty and scattered), and the ratios.
func BenchmarkRestore1GiB(b *testing.B) {
	rt, a, snap := snapshotted(b, Config{})
	rtAll, aAll, snapAll := snapshotted(b, Config{RestoreAll: true})
	scratch := make([]byte, 128<<20)
	for i := range scratch {
		scratch[i] = byte(i) // real pages, not the shared zero page
	}
	// The plain copy moves the same bytes the full restore does.
	live, saved := rtAll.mem.byHandle[aAll.Handle].data, snapAll.regions[0].saved
	contiguous, scattered := writeOnePct(64<<10), writeOnePct(pageSize)

	const (
		copyA = iota
		copyB
		full
		dirty
		spread
		variants
	)
	var took [variants]time.Duration
	var moved [variants]uint64
	timed := func(v int, setUp func() error, op func() (uint64, error)) {
		if setUp != nil {
			if err := setUp(); err != nil {
				b.Fatal(err)
			}
		}
		evict(scratch)
		start := time.Now()
		n, err := op()
		took[v] += time.Since(start)
		moved[v] += n
		if err != nil {
			b.Fatal(err)
		}
	}
	plainCopy := func() (uint64, error) { return uint64(copy(live, saved)), nil }
	round := func() {
		timed(copyA, nil, plainCopy)
		timed(full, func() error { return contiguous(rtAll, aAll) }, snapAll.Restore)
		timed(dirty, func() error { return contiguous(rt, a) }, snap.Restore)
		timed(spread, func() error { return scattered(rt, a) }, snap.Restore)
		timed(copyB, nil, plainCopy)
	}
	round() // warm-up, not counted: first touches, lazy allocations
	took, moved = [variants]time.Duration{}, [variants]uint64{}
	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()
	ms := func(v int) float64 { return took[v].Seconds() * 1e3 / float64(b.N) }
	gbs := func(v int) float64 { return float64(moved[v]) / took[v].Seconds() / 1e9 }
	for v, name := range []string{"copy", "copy-again", "full", "dirty", "scattered"} {
		b.ReportMetric(ms(v), name+"-ms")
		b.ReportMetric(gbs(v), name+"-GB/s")
	}
	b.ReportMetric(ms(copyB)/ms(copyA), "copy-A/A")
	b.ReportMetric(ms(full)/ms(copyA), "full/copy")
	b.ReportMetric(ms(copyA)/ms(dirty), "copy/dirty")
	b.ReportMetric(ms(copyA)/ms(spread), "copy/scattered")
}
