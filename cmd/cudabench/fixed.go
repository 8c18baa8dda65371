package main

import (
	"fmt"
	"time"

	"github.com/replayspec/replayspec/hsa"
)

// restoreCosts is issue 22's restore table, by the host's clock with the
// synchronisation included: (a) the first restore of a fresh snapshot,
// for every write pattern, against a plain copy of the same region; (b)
// the fixed cost of a replayed dispatch (snapshot, pass 0, first restore,
// pass 1, release) beyond the same two kernels run plainly and two plain
// copies of the region, for a 4 KiB region and the large one.
func (b *bench) restoreCosts(t *table, size uint64, reps int) error {
	const fill = 7
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	dst, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(dst)
	drain := func() error { return b.rt.DrainAgent(a.Agent) }
	var copyWall samples
	for i := range warmUp + reps {
		d, err := wall(func() error {
			if err := b.rt.CopyDeviceToDevice(dst, a, size); err != nil {
				return err
			}
			return drain()
		})
		if err != nil {
			return err
		}
		if i >= warmUp {
			copyWall = append(copyWall, d)
		}
	}
	t.row(fmt.Sprintf("**plain copy of the region** (%d MiB, host wall-clock incl. sync)", size>>20), dur(copyWall.median()), dur(copyWall.min()), "baseline")
	for _, p := range append(patterns(size), writePattern{"whole buffer", wholeBuffer(size)}) {
		if err := b.fillPattern(a, fill); err != nil {
			return err
		}
		pw, err := b.rt.NewPageWriter(p.pages)
		if err != nil {
			return err
		}
		var first, second samples
		for i := range warmUp + reps {
			s, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
			if err != nil {
				pw.Close()
				return err
			}
			restore := func() (time.Duration, error) {
				if err := pw.Run(a); err != nil {
					return 0, err
				}
				if err := drain(); err != nil {
					return 0, err
				}
				return wall(func() error {
					if _, err := s.Restore(); err != nil {
						return err
					}
					return drain()
				})
			}
			d1, err := restore()
			var d2 time.Duration
			if err == nil {
				d2, err = restore()
			}
			s.Release()
			if err != nil {
				pw.Close()
				return err
			}
			if i >= warmUp {
				first, second = append(first, d1), append(second, d2)
			}
		}
		pw.Close()
		aim := "≤ 1× plain copy (2% noise)"
		if first.median() > copyWall.median()*102/100 {
			aim += " (MISSED)"
		}
		t.row(fmt.Sprintf("  first restore of a snapshot, %s (host wall-clock incl. sync)", p.name),
			fmt.Sprintf("%s = %.2f× copy", dur(first.median()), ratio(first.median(), copyWall.median())),
			fmt.Sprintf("%s = %.2f×", dur(first.min()), ratio(first.min(), copyWall.min())), aim)
		t.row("    its second restore, which learns the write set (compare)",
			fmt.Sprintf("%s = %.2f× copy", dur(second.median()), ratio(second.median(), copyWall.median())),
			fmt.Sprintf("%s = %.2f×", dur(second.min()), ratio(second.min(), copyWall.min())), "")
	}
	for _, n := range []uint64{4096, size} {
		if err := b.fixedCost(t, n, reps); err != nil {
			return fmt.Errorf("fixed cost, %d bytes: %w", n, err)
		}
	}
	return nil
}

// wholeBuffer lists every page of the buffer.
func wholeBuffer(size uint64) []uint32 {
	pages := make([]uint32, size/4096)
	for i := range pages {
		pages[i] = uint32(i)
	}
	return pages
}

// fixedCost: a replayed dispatch of two passes (snapshot, increment over 1%
// of the region or all of a small one, restore, increment, release) against
// the same two launches without replay and two plain copies of the region
// (device time): what replay costs beyond its copies.
func (b *bench) fixedCost(t *table, size uint64, reps int) error {
	const fill = 7
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	dst, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(dst)
	if err := b.fillPattern(a, fill); err != nil {
		return err
	}
	grid := uint32(max(size/4/100, 1))
	if size <= 1<<20 {
		grid = uint32(size / 4)
	}
	drain := func() error { return b.rt.DrainAgent(a.Agent) }
	inc := func() error { return b.launch("increment", grid, arg(a)) }
	var replay, plain, copies samples
	for i := range warmUp + reps {
		r, err := wall(func() error {
			s, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
			if err != nil {
				return err
			}
			defer s.Release()
			if err := inc(); err != nil {
				return err
			}
			if _, err := s.Restore(); err != nil {
				return err
			}
			return inc()
		})
		if err == nil {
			err = drain()
		}
		if err != nil {
			return err
		}
		p, err := wall(func() error {
			if err := inc(); err != nil {
				return err
			}
			if err := inc(); err != nil {
				return err
			}
			return drain()
		})
		if err != nil {
			return err
		}
		c, err := b.deviceTime("plain copy", func() error { return b.rt.CopyDeviceToDevice(dst, a, size) })
		if err != nil {
			return err
		}
		if i >= warmUp {
			replay, plain, copies = append(replay, r), append(plain, p), append(copies, 2*c)
		}
	}
	fixed := replay.median() - plain.median() - copies.median()
	what := fmt.Sprintf("%d KiB", size>>10)
	if size >= 1<<20 {
		what = fmt.Sprintf("%d MiB, 1%% written", size>>20)
	}
	t.row(fmt.Sprintf("**fixed cost per replayed dispatch**, %s: replay %s − plain %s − two copies %s (host wall-clock incl. sync, release included)",
		what, dur(replay.median()), dur(plain.median()), dur(copies.median())), "**"+dur(fixed)+"**",
		dur(replay.min()-plain.min()-copies.min()), "≤ 0.2 ms")
	return nil
}
