package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/replayspec/replayspec/cuda"
	"github.com/replayspec/replayspec/hsa"
)

// copyBandwidth is the H200's device-to-device copy rate, bytes read plus
// bytes written per second (HARDWARE.md): the floor of a restore is its
// bytes at this rate plus one launch.
const copyBandwidth = 4.27e12

// writePattern is a set of 4 KiB pages a kernel writes, 1% of the buffer.
type writePattern struct {
	name  string
	pages []uint32
}

// patterns are the write sets of issue 16, over a buffer of size bytes.
func patterns(size uint64) []writePattern {
	total := uint32(size / 4096)
	want := total / 100
	var contiguous, blocks, strided, random []uint32
	for p := uint32(0); p < want; p++ {
		contiguous = append(contiguous, p)
	}
	for blk := uint32(0); blk*16 < total; blk += 100 { // every 100th 64 KiB block
		for p := blk * 16; p < blk*16+16 && p < total; p++ {
			blocks = append(blocks, p)
		}
	}
	for p := uint32(0); p < total; p += 100 {
		strided = append(strided, p)
	}
	rng := rand.New(rand.NewPCG(16, 1))
	picked := map[uint32]bool{}
	for uint32(len(random)) < want {
		p := rng.Uint32N(total)
		if !picked[p] {
			picked[p] = true
			random = append(random, p)
		}
	}
	return []writePattern{
		{"contiguous 1%", contiguous},
		{"every 100th 64 KiB block", blocks},
		{"every 100th 4 KiB page", strided},
		{"random 4 KiB pages, 1%", random},
	}
}

// restorePatterns: for each write pattern, the learned restore against a
// full copy and the floor, device time; the first (comparing) restore of a
// snapshot, events including the host; memory checked afterwards.
func (b *bench) restorePatterns(t *table, size uint64, reps int) error {
	const fill = 7
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	var launch samples
	for i := range warmUp + reps {
		d, err := b.deviceTime("empty launch", b.rt.EmptyLaunch)
		if err != nil {
			return err
		}
		if i >= warmUp {
			launch = append(launch, d)
		}
	}
	t.row("one empty launch (device)", dur(launch.median()), dur(launch.min()), "")
	for _, p := range patterns(size) {
		if err := b.fillPattern(a, fill); err != nil {
			return err
		}
		pw, err := b.rt.NewPageWriter(p.pages)
		if err != nil {
			return err
		}
		err = b.onePattern(t, a, p, pw, reps, launch.median())
		pw.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if err := b.checkPages(a, p.pages, fill); err != nil {
			t.row(fmt.Sprintf("  %s: memory after the restores", p.name), "FAIL: "+err.Error(), "", "ok")
			b.failed = true
		} else {
			t.row(fmt.Sprintf("  %s: memory after the restores", p.name), "ok: one increment on exactly the written pages", "", "ok")
		}
	}
	return nil
}

func (b *bench) onePattern(t *table, a hsa.Allocation, p writePattern, pw *cuda.PageWriter, reps int, launch time.Duration) error {
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	var second, snapT samples
	var secondBytes uint64
	for i := range warmUp + reps {
		var s hsa.Snapshot
		sn, err := b.deviceTime("snapshot", func() error {
			var err error
			s, err = b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
			return err
		})
		if err != nil {
			return err
		}
		var d time.Duration
		err = pw.Run(a)
		if err == nil {
			_, err = s.Restore() // the first: a plain copy
		}
		if err == nil {
			err = pw.Run(a)
		}
		if err == nil {
			d, err = b.rt.TimeGPU(func() error { n, err := s.Restore(); secondBytes = n; return err })
		}
		s.Release()
		if err != nil {
			return err
		}
		if i >= warmUp {
			second, snapT = append(second, d), append(snapT, sn)
		}
	}
	snap, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
	if err != nil {
		return err
	}
	defer snap.Release()
	for range 2 { // the second restore learns the write set
		if err := pw.Run(a); err != nil {
			return err
		}
		if _, err := snap.Restore(); err != nil {
			return err
		}
	}
	var full, learned samples
	var learnedBytes uint64
	for i := range warmUp + reps {
		var ds [2]time.Duration
		for j, m := range []cuda.RestoreMode{cuda.RestoreFull, cuda.RestoreLearned} {
			b.rt.SetRestoreMode(m)
			if err := pw.Run(a); err != nil {
				return err
			}
			var err error
			ds[j], err = b.deviceTime("pattern restore", func() error {
				n, err := snap.Restore()
				if m == cuda.RestoreLearned {
					learnedBytes = n
				}
				return err
			})
			if err != nil {
				return err
			}
		}
		if i >= warmUp {
			full, learned = append(full, ds[0]), append(learned, ds[1])
		}
	}
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	floor := time.Duration(float64(2*learnedBytes)/copyBandwidth*1e9) + launch
	mib := float64(learnedBytes) / (1 << 20)
	t.row(fmt.Sprintf("**%s** (%d pages, %.2f MiB): learned restore (device)", p.name, len(p.pages), mib),
		fmt.Sprintf("%s = %.2f× floor, %.2f× full", dur(learned.median()), ratio(learned.median(), floor), ratio(learned.median(), full.median())),
		fmt.Sprintf("%s = %.2f× floor", dur(learned.min()), ratio(learned.min(), floor)), "≤ 1.5× floor (contiguous); ≤ 1× full")
	t.row("  full restore (device)", dur(full.median()), dur(full.min()), "")
	t.row("  floor: bytes at 4.27 TB/s + one launch", dur(floor), "", "")
	t.row(fmt.Sprintf("  snapshot (device); a snapshot's second restore, which learns (compare_restore + flags to host; events incl. host; %.2f MiB)", float64(secondBytes)/(1<<20)),
		fmt.Sprintf("%s; %s", dur(snapT.median()), dur(second.median())), fmt.Sprintf("%s; %s", dur(snapT.min()), dur(second.min())), "")
	return nil
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }

// checkPages reads the whole buffer back: the written pages hold fill+1
// (one run's effect, after the restores), every other element fill.
func (b *bench) checkPages(a hsa.Allocation, pages []uint32, fill int32) error {
	written := make(map[uint32]bool, len(pages))
	for _, p := range pages {
		written[p] = true
	}
	// The last restore left the snapshot; one more run of the writer is
	// the state the application would see after replay.
	pw, err := b.rt.NewPageWriter(pages)
	if err != nil {
		return err
	}
	defer pw.Close()
	if err := pw.Run(a); err != nil {
		return err
	}
	buf := make([]byte, 64<<20)
	for off := uint64(0); off < a.Size; off += uint64(len(buf)) {
		n := min(uint64(len(buf)), a.Size-off)
		if err := b.rt.Read(a, off, buf[:n]); err != nil {
			return err
		}
		for i := uint64(0); i < n; i += 4 {
			want := fill
			if written[uint32((off+i)/4096)] {
				want = fill + 1
			}
			if v := int32(binary.LittleEndian.Uint32(buf[i:])); v != want {
				return fmt.Errorf("byte %d holds %d, want %d", off+i, v, want)
			}
		}
	}
	return nil
}
