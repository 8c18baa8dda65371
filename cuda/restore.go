package cuda

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/replayspec/replayspec/trace"
)

// Restore writes saved bytes back on the legacy default stream and returns
// how many it wrote. See RestoreMode for which bytes. Per region:
//   - a region kept on the host: one host-to-device copy of all of it;
//   - RestoreFull, too big to compare, or the first restore of a snapshot
//     under RestoreLearned: one device copy of all of it;
//   - a region whose write set is not known (the second restore of a
//     snapshot, or every restore under RestoreCompare): compare_restore,
//     one launch that compares the region with its copy, writes back the
//     16-byte vectors that differ and flags their 4 KiB pages; the flags
//     are read back to count the bytes and, under RestoreLearned, to learn
//     the write set;
//   - a learned write set: nothing when empty; one device copy when it is
//     one span; a full copy when it covers most of the region (cheaper
//     than copying nearly all of it in pieces); otherwise its spans, in
//     chunks, join one copy_ranges launch shared by every such region.
//
// So no restore costs much more than a full copy, whatever the pattern:
// the spans of all regions cost one launch plus their bytes.
func (s *snapshot) Restore() (uint64, error) { return s.RestoreWithHook(nil) }

// RestoreWithHook implements hsa.RestoreHook: on success the writes and
// what hook records are recorded on the driver thread behind the copies
// (decision 18.8).
func (s *snapshot) RestoreWithHook(hook func(bytes uint64)) (uint64, error) {
	s.rt.mu.Lock()
	mode := s.rt.restoreMode
	s.rt.mu.Unlock()
	var live []*savedRegion
	for _, g := range s.regions {
		if s.alive(g) {
			live = append(live, g)
		}
	}
	var restored uint64
	var written []trace.Region
	whole := func(g *savedRegion) {
		written = append(written, trace.Region{Addr: g.alloc.Handle, Bytes: g.alloc.Size})
	}
	spans := func(g *savedRegion, sps []span) {
		for _, sp := range sps {
			written = append(written, trace.Region{Addr: g.alloc.Handle + sp.off, Bytes: sp.n})
		}
	}
	// What was written is recorded even when the restore fails part-way.
	recorded := false
	defer func() {
		if !recorded {
			s.rt.traffic(trace.MemWrite, s.thread, s.agentOf(), written)
		}
	}()
	s.rt.mu.Lock()
	s.rt.restores++
	failing := s.rt.failRestoreAt > 0 && s.rt.restores == s.rt.failRestoreAt
	s.rt.mu.Unlock()
	if failing && len(live) > 0 {
		// Planted (Options.FailRestoreAt; a spec's restore_fails_at):
		// the restore fails in its first copy, which wrote the first live
		// region back whole and nothing after it (MEM-5). A restore with
		// no live region makes no copy and has nothing to fail in.
		g := live[0]
		err := s.rt.w.do(func() error {
			if g.dev == 0 {
				return s.rt.drv.htod(g.alloc.Handle, g.host)
			}
			return s.rt.drv.dtodAsync(g.alloc.Handle, g.dev, g.alloc.Size, 0)
		})
		if err != nil {
			return 0, err
		}
		whole(g)
		return g.alloc.Size, fmt.Errorf("%w: restore %d failed after 1 of %d regions", ErrInjected, s.rt.failRestoreAt, len(live))
	}
	err := s.rt.w.do(func() error {
		var find, ranged []*savedRegion
		// The learned write sets hold only after the same writes as the
		// pass they were learned from; after others they are learned anew.
		wrote := s.since
		s.since = writeLog{}
		sameWrites := wrote == s.learnedFrom
		defer func() {
			for _, g := range live {
				g.restores++
			}
		}()
		for _, g := range live {
			switch {
			case g.dev == 0:
				if err := s.rt.drv.htod(g.alloc.Handle, g.host); err != nil {
					return err
				}
				restored += g.alloc.Size
				whole(g)
			case mode == RestoreFull || g.alloc.Size > maxCompareBytes || (mode == RestoreLearned && g.known && g.whole && sameWrites),
				mode == RestoreLearned && !g.known && g.restores == 0:
				// A snapshot's first restore under RestoreLearned is a
				// plain copy: comparing reads the region and its copy,
				// 1.1-1.75x a copy by pattern (issue 22), and a two-pass
				// replay never restores again. The second restore learns.
				if err := s.rt.drv.dtodAsync(g.alloc.Handle, g.dev, g.alloc.Size, 0); err != nil {
					return err
				}
				restored += g.alloc.Size
				whole(g)
			case mode == RestoreLearned && g.known && sameWrites:
				n := spanBytes(g.learned)
				restored += n
				spans(g, g.learned)
				switch len(g.learned) {
				case 0:
				case 1:
					sp := g.learned[0]
					if err := s.rt.drv.dtodAsync(g.alloc.Handle+sp.off, g.dev+sp.off, sp.n, 0); err != nil {
						return err
					}
				default:
					ranged = append(ranged, g)
				}
			default:
				find = append(find, g)
			}
		}
		if len(ranged) > 0 {
			if err := s.copyRanges(ranged); err != nil {
				return err
			}
		}
		if len(find) > 0 {
			learn := mode == RestoreLearned
			n, err := s.compareRestore(find, learn, spans)
			if err != nil {
				return err
			}
			restored += n
			if learn {
				s.learnedFrom = wrote
			}
		}
		s.rt.traffic(trace.MemWrite, s.thread, s.agentOf(), written)
		recorded = true
		if hook != nil {
			hook(restored)
		}
		return nil // ordered like Snapshot's copies
	})
	return restored, err
}

// maxCompareBytes: the compare kernel indexes 16-byte vectors with 32 bits
// (a tile of 4 a thread past the last vector must not wrap).
const maxCompareBytes = 16 << 31

// wholeFraction: a learned write set of at least this share of its region
// is restored with one full copy, as fast as the ranges and one launch.
const wholeFraction = 0.85

// compareRestore restores regions whose write set is not known with one
// compare_restore launch each, then reads the page flags back (which waits
// for them) and returns the bytes of the pages that differed. With learn,
// each region keeps its dirty spans for later restores.
func (s *snapshot) compareRestore(regions []*savedRegion, learn bool, wrote func(*savedRegion, []span)) (uint64, error) {
	d := s.rt.drv
	words := (s.nflags + 3) / 4
	if s.flags == 0 {
		f, err := s.rt.pool.alloc(d, 4*words)
		if err != nil {
			return 0, fmt.Errorf("cuda: restore flags: %w", err)
		}
		s.flags = f
	}
	if d.memsetD8Async != 0 {
		if err := call("cuMemsetD8Async", d.memsetD8Async, uintptr(s.flags), 0, uintptr(4*words), 0); err != nil {
			return 0, err
		}
	} else if err := d.cuLaunch(s.rt.kernels["fill"], uint32((words+255)/256), 256, []uint64{s.flags, 0, words}, 0); err != nil {
		return 0, err
	}
	fn := s.rt.kernels["compare_restore"]
	const perCTA = 256 * compareVectorsPerThread
	for _, g := range regions {
		vecs := (g.alloc.Size + 15) / 16
		args := []uint64{g.alloc.Handle, g.dev, s.flags + g.flagBase, g.alloc.Size, compareBlockShift}
		if err := d.cuLaunch(fn, uint32((vecs+perCTA-1)/perCTA), 256, args, 0); err != nil {
			return 0, fmt.Errorf("%w: compare_restore", err)
		}
	}
	flags, err := s.rt.stagingBytes(4 * words)
	if err != nil {
		return 0, err
	}
	if err := d.dtoh(flags, s.flags); err != nil { // synchronous: waits for the launches
		return 0, err
	}
	var restored uint64
	for _, g := range regions {
		spans := dirtySpans(flags[g.flagBase:g.flagBase+blocksFor(g.alloc.Size)], compareBlockBytes, g.alloc.Size)
		n := spanBytes(spans)
		restored += n
		wrote(g, spans)
		if learn {
			g.learned, g.known = spans, true
			g.whole = float64(n) >= wholeFraction*float64(g.alloc.Size)
			s.list = nil // the range list changes with the write set
		}
	}
	return restored, nil
}

// copyRanges restores the learned spans of regions with one copy_ranges
// launch. The list of chunks lives on the device and is rebuilt only when
// the set of regions changes (a region freed, a write set learned).
func (s *snapshot) copyRanges(regions []*savedRegion) error {
	d := s.rt.drv
	if !sameRegions(s.listFor, regions) {
		s.list = nil
	}
	if s.list == nil {
		entries := chunkEntries(regions)
		raw := make([]byte, 8*len(entries))
		for i, v := range entries {
			binary.LittleEndian.PutUint64(raw[8*i:], v)
		}
		if s.listDev != 0 {
			s.rt.pool.release(d, s.listDev, s.listBytes)
			s.listDev = 0
		}
		dev, err := s.rt.pool.alloc(d, uint64(len(raw)))
		if err != nil {
			return fmt.Errorf("cuda: restore range list: %w", err)
		}
		s.listDev, s.listBytes = dev, uint64(len(raw))
		if err := d.htod(dev, raw); err != nil {
			return err
		}
		s.list = entries
		s.listFor = append(s.listFor[:0], regions...)
	}
	count := uint64(len(s.list) / 3)
	ctas := (count + copyWarpsPerCTA - 1) / copyWarpsPerCTA
	return d.cuLaunch(s.rt.kernels["copy_ranges"], uint32(ctas), 32*copyWarpsPerCTA, []uint64{s.listDev, count}, 0)
}

// chunkEntries lists dst, src, bytes for every span of every region, split
// into chunks of at most copyChunkBytes.
func chunkEntries(regions []*savedRegion) []uint64 {
	var out []uint64
	for _, g := range regions {
		for _, sp := range g.learned {
			for off := sp.off; off < sp.off+sp.n; off += copyChunkBytes {
				n := min(uint64(copyChunkBytes), sp.off+sp.n-off)
				out = append(out, g.alloc.Handle+off, g.dev+off, n)
			}
		}
	}
	return out
}

func sameRegions(a, b []*savedRegion) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stagingBytes is n bytes of pinned host memory (driver thread), kept by
// the runtime for every snapshot: the page flags come back into it without
// the driver's own staging copy, and allocating pinned memory per snapshot
// cost ~0.9 ms and its release ~0.37 ms on the H200 (issue 22). It grows
// to the largest request and is freed at Close.
func (r *Runtime) stagingBytes(n uint64) ([]byte, error) {
	if uint64(len(r.staging)) < n {
		d := r.drv
		if r.stagingPtr != 0 {
			_ = call("cuMemFreeHost", d.memFreeHost, r.stagingPtr)
			r.stagingPtr, r.staging = 0, nil
		}
		size := max(n, 64<<10)
		var p uintptr
		if err := call("cuMemAllocHost", d.memAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(size)); err != nil {
			return nil, err
		}
		r.stagingPtr = p
		r.staging = hostBytes(uint64(p), 0, size)
	}
	return r.staging[:n], nil
}
