package main

import (
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

// measure is part (c): every figure is CUDA-event time on the device.
func (b *bench) measure(t *table, big uint64, reps int) error {
	if err := b.bandwidth(t, big); err != nil {
		return err
	}
	if err := b.perPass(t, reps); err != nil {
		return err
	}
	return b.writeSet(t, big)
}

// timed is TimeGPU that also notes the host's wall-clock time in f, to
// tell device time from host gaps in the figures.
func (b *bench) timed(f func() error) (gpu time.Duration, err error) {
	var host time.Duration
	gpu, err = b.rt.TimeGPU(func() error {
		began := time.Now()
		err := f()
		host = time.Since(began)
		return err
	})
	b.lastHost = host
	return gpu, err
}

// best is the fastest of n timed runs of f (the first also warms up);
// bestHost is the host time of that run.
func (b *bench) best(n int, f func() error) (time.Duration, error) {
	best := time.Duration(-1)
	var host time.Duration
	for range n {
		d, err := b.timed(f)
		if err != nil {
			return 0, err
		}
		if best < 0 || d < best {
			best, host = d, b.lastHost
		}
	}
	b.bestHost = host
	return best, nil
}

func hostNote(d time.Duration) string { return fmt.Sprintf(" [host %.1f us]", us(d)) }

func gbps(bytes uint64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", d.Seconds()*1e3) }

// bandwidth: snapshot and full restore of one big buffer against a plain
// cuMemcpyDtoD of the same bytes.
func (b *bench) bandwidth(t *table, size uint64) error {
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
	plain, err := b.best(10, func() error { return b.rt.CopyDeviceToDevice(dst, src, size) })
	if err != nil {
		return err
	}
	plainHost := b.bestHost
	var snap hsa.Snapshot
	snapTime, err := b.best(10, func() error {
		if snap != nil {
			snap.Release()
		}
		var err error
		snap, err = b.rt.Snapshot(src.Agent, []hsa.Allocation{src})
		return err
	})
	if err != nil {
		return err
	}
	snapHost := b.bestHost
	defer snap.Release()
	b.rt.SetRestoreMode(cuda.RestoreFull)
	restTime, err := b.best(10, func() error { _, err := snap.Restore(); return err })
	if err != nil {
		return err
	}
	restHost := b.bestHost
	mib := size >> 20
	t.row(fmt.Sprintf("plain cuMemcpyDtoD, %d MiB", mib), fmt.Sprintf("%s (%.0f GB/s copied)", ms(plain), gbps(size, plain))+hostNote(plainHost), "baseline")
	t.row(fmt.Sprintf("snapshot, %d MiB (pooled buffer + DtoD)", mib), fmt.Sprintf("%s (%.0f GB/s, %.0f%% of plain)", ms(snapTime), gbps(size, snapTime), 100*plain.Seconds()/snapTime.Seconds())+hostNote(snapHost), ">= 80%")
	t.row(fmt.Sprintf("full restore, %d MiB", mib), fmt.Sprintf("%s (%.0f GB/s, %.0f%% of plain)", ms(restTime), gbps(size, restTime), 100*plain.Seconds()/restTime.Seconds())+hostNote(restHost), ">= 80%")
	t.row("snapshot + restore vs two plain copies", fmt.Sprintf("%.0f%%", 100*2*plain.Seconds()/(snapTime+restTime).Seconds()), ">= 80%")
	return nil
}

// perPass: a tiny kernel replayed 4 times with snapshot and restores of a
// small buffer, against 4 plain launches; median of reps.
func (b *bench) perPass(t *table, reps int) error {
	const n, passes = 1024, 4
	a, err := b.upload(make([]int32, n))
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	var plain, replay []time.Duration
	for range reps {
		d, err := b.rt.TimeGPU(func() error {
			for range passes {
				if err := b.launch("increment", n, arg(a)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		plain = append(plain, d)
		d, err = b.rt.TimeGPU(func() error {
			snap, err := b.rt.Snapshot(a.Agent, []hsa.Allocation{a})
			if err != nil {
				return err
			}
			defer snap.Release()
			return b.passes(snap, passes, "increment", n, arg(a))
		})
		if err != nil {
			return err
		}
		replay = append(replay, d)
	}
	p, r := median(plain), median(replay)
	// Host view of the same: wall-clock per synchronous launch.
	const launches = 200
	began := time.Now()
	for range launches {
		if err := b.launch("increment", n, arg(a)); err != nil {
			return err
		}
	}
	t.row("tiny kernel, host wall-clock per Submit (launch + sync)", fmt.Sprintf("%.1f us", us(time.Since(began))/launches), "")
	t.row(fmt.Sprintf("tiny kernel (%d items), %d plain launches", n, passes), fmt.Sprintf("%.1f us per launch", us(p)/passes), "")
	t.row(fmt.Sprintf("same, replayed %d passes (snapshot + %d restores of 4 KiB)", passes, passes-1), fmt.Sprintf("%.1f us per pass", us(r)/passes), "")
	t.row("replay overhead per pass", fmt.Sprintf("%.1f us", (us(r)-us(p))/passes), "<= 20 us")
	return nil
}

func us(d time.Duration) float64 { return d.Seconds() * 1e6 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// writeSet: the kernel writes the first 1% of a big buffer; restore cost in
// each mode, per pass.
func (b *bench) writeSet(t *table, size uint64) error {
	elems := size / 4
	grid := uint32(elems / 100)
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	if err := b.launch("fill", uint32(elems), arg(a), hsa.Arg{Scalar: 0}); err != nil {
		return err
	}
	snap, err := b.rt.Snapshot(a.Agent, []hsa.Allocation{a})
	if err != nil {
		return err
	}
	defer snap.Release()
	restore := func(mode cudaMode) (time.Duration, uint64, error) {
		b.rt.SetRestoreMode(mode)
		if err := b.launch("increment", grid, arg(a)); err != nil {
			return 0, 0, err
		}
		var bytes uint64
		d, err := b.timed(func() error { n, err := snap.Restore(); bytes = n; return err })
		return d, bytes, err
	}
	// The snapshot's first restore learns the write set (compare kernel).
	first, firstBytes, err := restore(cuda.RestoreLearned)
	if err != nil {
		return err
	}
	firstHost := b.lastHost
	var learned, compare, full, learnedHost, compareHost, fullHost time.Duration
	var learnedBytes uint64
	for _, m := range []struct {
		mode    cudaMode
		d, host *time.Duration
	}{{cuda.RestoreLearned, &learned, &learnedHost}, {cuda.RestoreCompare, &compare, &compareHost}, {cuda.RestoreFull, &full, &fullHost}} {
		*m.d = -1
		for range 10 {
			d, n, err := restore(m.mode)
			if err != nil {
				return err
			}
			if m.mode == cuda.RestoreLearned {
				learnedBytes = n
			}
			if *m.d < 0 || d < *m.d {
				*m.d, *m.host = d, b.lastHost
			}
		}
	}
	if err := b.verifyWriteSet(a, elems, uint64(grid)); err != nil {
		return err
	}
	mib := size >> 20
	t.row(fmt.Sprintf("kernel writes 1%% of %d MiB: full restore", mib), ms(full)+hostNote(fullHost), "")
	t.row("  write-set restore, first (compare kernel + copy)", fmt.Sprintf("%s (%d MiB copied)", ms(first), firstBytes>>20)+hostNote(firstHost), "")
	t.row("  write-set restore, compare every time", ms(compare)+hostNote(compareHost), "")
	t.row("  write-set restore, learned blocks", fmt.Sprintf("%s (%.1f MiB copied)", ms(learned), float64(learnedBytes)/(1<<20))+hostNote(learnedHost), "")
	t.row("  full / learned write-set", fmt.Sprintf("%.0fx faster", full.Seconds()/learned.Seconds()), "")
	return nil
}

// verifyWriteSet: after the restores the buffer is the snapshot (zeros);
// increment once more and check the written prefix and the untouched tail.
func (b *bench) verifyWriteSet(a hsa.Allocation, elems, grid uint64) error {
	if err := b.launch("increment", uint32(grid), arg(a)); err != nil {
		return err
	}
	head, err := b.download(a, 0, grid+1024)
	if err != nil {
		return err
	}
	tail, err := b.download(a, elems-1024, 1024)
	if err != nil {
		return err
	}
	for i, v := range head {
		if want := int32(0); uint64(i) < grid && v != 1 || uint64(i) >= grid && v != want {
			return fmt.Errorf("write-set replay: element %d = %d", i, v)
		}
	}
	for i, v := range tail {
		if v != 0 {
			return fmt.Errorf("write-set replay: tail element %d = %d", i, v)
		}
	}
	return nil
}
