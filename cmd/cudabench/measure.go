package main

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/replayspec/replayspec/cuda"
	"github.com/replayspec/replayspec/hsa"
)

type cudaMode = cuda.RestoreMode

var restoreModes = []struct {
	mode cudaMode
	name string
}{
	{cuda.RestoreLearned, "write-set, learned"},
	{cuda.RestoreCompare, "write-set, compare every time"},
	{cuda.RestoreFull, "full"},
}

// warmUp is how many runs of each measured operation precede the samples.
const warmUp = 3

// measure is part (c). Device work (copies, restores) is timed with a
// cuda.DeviceTimer: events around the device operations only, the stream
// held until the host has enqueued all of them, so host scheduling gaps
// are not counted. What costs host time by nature (a Submit waits for its
// kernel; a comparing restore reads flags back) is timed with events that
// bracket the host's calls too, and by the host's clock. Every figure is the
// median and the minimum of reps samples after warmUp runs; every ratio is
// taken within this run.
func (b *bench) measure(t *table, big uint64, reps, passReps int) error {
	if err := b.bandwidth(t, big, reps); err != nil {
		return err
	}
	if err := b.perPass(t, passReps); err != nil {
		return err
	}
	return b.writeSet(t, big, reps)
}

// samples collects durations; median and min summarize them.
type samples []time.Duration

func (s samples) median() time.Duration {
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func (s samples) min() time.Duration { return slices.Min(s) }

// deviceTime times f's device work with the gate. Where the gate cannot
// hold (f waited for the device), the figure named what falls back to
// events around f's host calls, which include host gaps; the table says so.
func (b *bench) deviceTime(what string, f func() error) (time.Duration, error) {
	if b.ungated[what] {
		return b.rt.TimeGPU(f)
	}
	d, err := b.timer.Time(f)
	if errors.Is(err, cuda.ErrGateTimedOut) {
		b.ungated[what] = true
		return b.rt.TimeGPU(f)
	}
	return d, err
}

// wall runs f and returns the host's wall-clock time for it.
func wall(f func() error) (time.Duration, error) {
	began := time.Now()
	err := f()
	return time.Since(began), err
}

func gbps(bytes uint64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }

func us(d time.Duration) float64 { return d.Seconds() * 1e6 }

// dur prints µs below 100 µs, else ms.
func dur(d time.Duration) string {
	if d < 100*time.Microsecond {
		return fmt.Sprintf("%.1f µs", us(d))
	}
	return fmt.Sprintf("%.3f ms", d.Seconds()*1e3)
}

func pct(base, d time.Duration) string { return fmt.Sprintf("%.0f%%", 100*base.Seconds()/d.Seconds()) }

func times(a, b time.Duration) string { return fmt.Sprintf("%.1f×", a.Seconds()/b.Seconds()) }

// fillPattern writes a non-zero value everywhere: no figure is timed on zeros.
func (b *bench) fillPattern(a hsa.Allocation, v int32) error {
	return b.launch("fill", uint32(a.Size/4), arg(a), hsa.Arg{Scalar: v})
}

// bandwidth: snapshot and full restore of one big buffer against a plain
// cuMemcpyDtoD of the same bytes, interleaved sample by sample, device time.
func (b *bench) bandwidth(t *table, size uint64, reps int) error {
	src, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(src)
	dst, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(dst)
	if err := b.fillPattern(src, 0x5a5a5a5); err != nil {
		return err
	}
	held, err := b.rt.Snapshot(0, src.Agent, []hsa.Allocation{src}) // restored from
	if err != nil {
		return err
	}
	defer held.Release()
	// A second buffer into the pool, so no timed snapshot allocates.
	warm, err := b.rt.Snapshot(0, src.Agent, []hsa.Allocation{src})
	if err != nil {
		return err
	}
	warm.Release()
	b.rt.SetRestoreMode(cuda.RestoreFull)
	var plain, snap, rest samples
	for i := range warmUp + reps {
		p, err := b.deviceTime("plain copy", func() error { return b.rt.CopyDeviceToDevice(dst, src, size) })
		if err != nil {
			return err
		}
		var s hsa.Snapshot
		sn, err := b.deviceTime("snapshot", func() error {
			var err error
			s, err = b.rt.Snapshot(0, src.Agent, []hsa.Allocation{src})
			return err
		})
		if err != nil {
			return err
		}
		s.Release() // the buffer goes back to the pool for the next sample
		r, err := b.deviceTime("full restore", func() error { _, err := held.Restore(); return err })
		if err != nil {
			return err
		}
		if i >= warmUp {
			plain, snap, rest = append(plain, p), append(snap, sn), append(rest, r)
		}
	}
	mib := size >> 20
	pm, pn := plain.median(), plain.min()
	t.row(fmt.Sprintf("plain `cuMemcpyDtoD`, %d MiB", mib),
		fmt.Sprintf("%s (%.0f GB/s)", dur(pm), gbps(size, pm)), fmt.Sprintf("%s (%.0f GB/s)", dur(pn), gbps(size, pn)), "baseline")
	for _, r := range []struct {
		what string
		s    samples
	}{{fmt.Sprintf("snapshot, %d MiB (pooled buffer + DtoD)", mib), snap}, {fmt.Sprintf("full restore, %d MiB", mib), rest}} {
		m, n := r.s.median(), r.s.min()
		t.row(r.what, fmt.Sprintf("%s, %s of plain", dur(m), pct(pm, m)), fmt.Sprintf("%s, %s of plain", dur(n), pct(pn, n)), "≥ 80%")
	}
	t.row("**snapshot + restore vs two plain copies**", "**"+pct(2*pm, snap.median()+rest.median())+"**",
		pct(2*pn, snap.min()+rest.min()), "≥ 80%")
	return nil
}

// perPass: a tiny kernel replayed 4 passes with a snapshot and restores of
// its 4 KiB buffer, against 4 plain launches, interleaved. Each Submit waits
// for its kernel, so this is a host-side figure by nature: events on the
// default stream bracket the host's calls, and the host clock times the
// same calls.
func (b *bench) perPass(t *table, reps int) error {
	const n, passes = 1024, 4
	a, err := b.upload(make([]int32, n))
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	plainRun := func() error {
		for range passes {
			if err := b.launch("increment", n, arg(a)); err != nil {
				return err
			}
		}
		return nil
	}
	replayRun := func() error {
		snap, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
		if err != nil {
			return err
		}
		defer snap.Release()
		return b.passes(snap, passes, "increment", n, arg(a))
	}
	// both is one sample of f: the event span and the host's wall clock.
	both := func(f func() error) (ev, host time.Duration, err error) {
		ev, err = b.rt.TimeGPU(func() error {
			var err error
			host, err = wall(f)
			return err
		})
		return ev, host, err
	}
	var plainEv, plainHost, replayEv, replayHost, submit samples
	for i := range warmUp + reps {
		pe, ph, err := both(plainRun)
		if err != nil {
			return err
		}
		re, rh, err := both(replayRun)
		if err != nil {
			return err
		}
		s, err := wall(func() error { return b.launch("increment", n, arg(a)) })
		if err != nil {
			return err
		}
		if i >= warmUp {
			plainEv, plainHost, replayEv, replayHost = append(plainEv, pe), append(plainHost, ph), append(replayEv, re), append(replayHost, rh)
			submit = append(submit, s)
		}
	}
	per := func(d time.Duration) time.Duration { return d / passes }
	row := func(what string, s samples) {
		t.row(what, dur(per(s.median())), dur(per(s.min())), "")
	}
	t.row("tiny kernel, host wall-clock per Submit (launch + sync)", dur(submit.median()), dur(submit.min()), "")
	row(fmt.Sprintf("tiny kernel (%d items), %d plain launches, per launch (events)", n, passes), plainEv)
	row(fmt.Sprintf("same, replayed %d passes (snapshot + %d restores of 4 KiB), per pass (events)", passes, passes-1), replayEv)
	t.row("**replay overhead per pass** (events)", "**"+dur(per(replayEv.median()-plainEv.median()))+"**",
		dur(per(replayEv.min()-plainEv.min())), "≤ 20 µs")
	row("  plain launches, per launch (host wall-clock)", plainHost)
	row("  replayed, per pass (host wall-clock)", replayHost)
	t.row("  replay overhead per pass (host wall-clock)", dur(per(replayHost.median()-plainHost.median())),
		dur(per(replayHost.min()-plainHost.min())), "≤ 20 µs")
	return nil
}

// writeSet: the kernel writes the first 1% of a big buffer; what a restore
// costs in each mode.
func (b *bench) writeSet(t *table, size uint64, reps int) error {
	const pattern = 7
	elems := size / 4
	grid := uint32(elems / 100)
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	if err := b.fillPattern(a, pattern); err != nil {
		return err
	}
	write := func() error { return b.launch("increment", grid, arg(a)) }
	restore := func(s hsa.Snapshot, bytes *uint64) func() error {
		return func() error { n, err := s.Restore(); *bytes = n; return err }
	}

	// A snapshot's first restore is a plain copy; its second learns the
	// write set: compare kernel, flags read back by the host, then the
	// copy. A fresh snapshot each sample; events bracket the host round
	// trip, which is part of it.
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	var first, second samples
	var firstBytes, secondBytes uint64
	for i := range warmUp + reps {
		s, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
		if err != nil {
			return err
		}
		var d1, d2 time.Duration
		err = write()
		if err == nil {
			d1, err = b.rt.TimeGPU(restore(s, &firstBytes))
		}
		if err == nil {
			err = write()
		}
		if err == nil {
			d2, err = b.rt.TimeGPU(restore(s, &secondBytes))
		}
		s.Release()
		if err != nil {
			return err
		}
		if i >= warmUp {
			first, second = append(first, d1), append(second, d2)
		}
	}

	// Steady state: one snapshot, its write set learned; full and learned
	// restores interleaved, device time. The learned restore is also timed
	// the old way (events around the host's call, host gaps included).
	snap, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
	if err != nil {
		return err
	}
	defer snap.Release()
	var learnedBytes, fullBytes uint64
	for range 2 { // the second restore learns
		if err := write(); err != nil {
			return err
		}
		if _, err := b.rt.TimeGPU(restore(snap, &learnedBytes)); err != nil {
			return err
		}
	}
	var full, learned, learnedSpan samples
	for i := range warmUp + reps {
		var ds [3]time.Duration
		for j, m := range []cudaMode{cuda.RestoreFull, cuda.RestoreLearned, cuda.RestoreLearned} {
			b.rt.SetRestoreMode(m)
			if err := write(); err != nil {
				return err
			}
			bytes, what := &learnedBytes, "learned write-set restore"
			if m == cuda.RestoreFull {
				bytes, what = &fullBytes, "full restore, 1% written"
			}
			var err error
			if j < 2 {
				ds[j], err = b.deviceTime(what, restore(snap, bytes))
			} else {
				ds[j], err = b.rt.TimeGPU(restore(snap, bytes))
			}
			if err != nil {
				return err
			}
		}
		if i >= warmUp {
			full, learned, learnedSpan = append(full, ds[0]), append(learned, ds[1]), append(learnedSpan, ds[2])
		}
	}

	// Compare every time: the compare kernel and the flag read-back before
	// every restore (events bracket the round trip).
	b.rt.SetRestoreMode(cuda.RestoreCompare)
	var compare samples
	var compareBytes uint64
	for i := range warmUp + reps {
		if err := write(); err != nil {
			return err
		}
		d, err := b.rt.TimeGPU(restore(snap, &compareBytes))
		if err != nil {
			return err
		}
		if i >= warmUp {
			compare = append(compare, d)
		}
	}
	if err := b.verifyWriteSet(a, elems, uint64(grid), pattern); err != nil {
		return err
	}

	mib := size >> 20
	mibOf := func(n uint64) string { return fmt.Sprintf("%.2f MiB copied", float64(n)/(1<<20)) }
	t.row(fmt.Sprintf("kernel writes 1%% of %d MiB: full restore (device, %s)", mib, mibOf(fullBytes)), dur(full.median()), dur(full.min()), "")
	t.row(fmt.Sprintf("  write-set restore, learned, steady state (device, %s)", mibOf(learnedBytes)), dur(learned.median()), dur(learned.min()), "")
	t.row("  **full / learned write-set restore** (device time)", "**"+times(full.median(), learned.median())+"**", times(full.min(), learned.min()), "")
	t.row("  learned restore, events around the host's call (host gaps included)", dur(learnedSpan.median()), dur(learnedSpan.min()), "")
	t.row(fmt.Sprintf("  learned mode, first restore of a snapshot (a plain copy; %s)", mibOf(firstBytes)), dur(first.median()), dur(first.min()), "")
	t.row(fmt.Sprintf("  learned mode, second restore (compare + flags to host + copy: learns; %s)", mibOf(secondBytes)), dur(second.median()), dur(second.min()), "")
	t.row(fmt.Sprintf("  write-set restore, compare every time (same; %s)", mibOf(compareBytes)), dur(compare.median()), dur(compare.min()), "")
	t.row("  full / compare-every-time restore", times(full.median(), compare.median()), times(full.min(), compare.min()), "")
	return nil
}

// verifyWriteSet: after the restores the buffer is the snapshot (pattern
// everywhere); increment once more and check the written prefix and the
// untouched tail.
func (b *bench) verifyWriteSet(a hsa.Allocation, elems, grid uint64, pattern int32) error {
	if err := b.launch("increment", uint32(grid), arg(a)); err != nil {
		return err
	}
	if err := b.checkOneRun(a, elems, grid, pattern); err != nil {
		return fmt.Errorf("write-set replay: %w", err)
	}
	return nil
}
