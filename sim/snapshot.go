package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// ErrInjected marks a failure that Config asked for (MEM-5 tests).
var ErrInjected = errors.New("sim: injected failure")

// snapshot saves whole regions once and, thanks to the page stamps,
// restores only the pages written since the snapshot or the last restore.
type snapshot struct {
	rt      *Runtime
	regions []savedRegion
	bytes   uint64
	// mark is the memory version the saved bytes match: pages stamped
	// later differ from the copy.
	mark     uint64
	released bool
	agent    hsa.AgentID
	thread   hsa.ThreadID // who snapshots, and restores
}

type savedRegion struct {
	live  *allocation // identity, not handle: a freed region stays freed
	saved []byte
	gen   uint64 // the content generation saved (contents.go)
}

// Snapshot implements hsa.Runtime. It copies only the regions given; the
// engine decides what is tracked (MEM-4).
func (r *Runtime) Snapshot(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation) (hsa.Snapshot, error) {
	return r.SnapshotWithHook(thread, agent, regions, nil)
}

// SnapshotWithHook implements hsa.SnapshotHook: saved runs under the
// memory lock, right after the runtime records its read, so no kernel of
// another thread is recorded between the copy and what saved records.
func (r *Runtime) SnapshotWithHook(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation, saved func(bytes uint64)) (hsa.Snapshot, error) {
	return r.SnapshotListed(thread, agent, func() []hsa.Allocation { return regions }, saved)
}

// SnapshotListed implements hsa.SnapshotLister: list runs under the memory
// lock, where allocations, frees and the allocation hook's calls are made
// (AllocateWith, FreeWith), so the regions it names are live as it names
// them and stay so until the copy is done.
func (r *Runtime) SnapshotListed(thread hsa.ThreadID, agent hsa.AgentID, list func() []hsa.Allocation, saved func(bytes uint64)) (hsa.Snapshot, error) {
	st, ok := r.agent(agent)
	if !ok {
		return nil, fmt.Errorf("%w: %d", hsa.ErrUnknownAgent, agent)
	}
	m := r.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	regions := list()
	var lives []*allocation
	var total uint64
	seen := make(map[uint64]bool, len(regions))
	for _, a := range regions {
		if seen[a.Handle] {
			continue
		}
		seen[a.Handle] = true
		al, err := m.lookup(a)
		if err != nil {
			return nil, fmt.Errorf("sim: snapshot: %w", err)
		}
		if al.meta.Agent != agent {
			return nil, fmt.Errorf("sim: snapshot of agent %d: allocation %d belongs to agent %d", agent, a.Handle, al.meta.Agent)
		}
		lives = append(lives, al)
		total += al.meta.Size
	}
	if r.cfg.FailSnapshotOver > 0 && total > r.cfg.FailSnapshotOver {
		return nil, fmt.Errorf("%w: snapshot of %d bytes exceeds FailSnapshotOver=%d", ErrInjected, total, r.cfg.FailSnapshotOver)
	}
	if st.snapshotLimit > 0 && total > st.snapshotLimit {
		return nil, fmt.Errorf("%w: snapshot of %d bytes on agent %d exceeds its SnapshotLimit=%d", ErrInjected, total, agent, st.snapshotLimit)
	}
	s := &snapshot{rt: r, bytes: total, mark: m.version, agent: agent, thread: thread}
	read := make([]trace.Region, 0, len(lives))
	for _, al := range lives {
		s.regions = append(s.regions, savedRegion{live: al, saved: append([]byte(nil), al.data...), gen: al.gen})
		read = append(read, trace.Region{Addr: al.meta.Handle, Bytes: al.meta.Size})
	}
	r.trafficAll(trace.MemRead, thread, agent, read)
	if saved != nil {
		saved(total)
	}
	return s, nil
}

func (s *snapshot) Bytes() uint64 { return s.bytes }

// Restore writes back the pages written since the snapshot or the previous
// restore and skips regions freed since the snapshot (MEM-4).
func (s *snapshot) Restore() (uint64, error) { return s.RestoreWithHook(nil) }

// RestoreWithHook implements hsa.RestoreHook: restored runs under the
// memory lock, right after the runtime records its writes.
func (s *snapshot) RestoreWithHook(restored func(bytes uint64)) (n uint64, err error) {
	m := s.rt.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.released {
		return 0, fmt.Errorf("sim: restore of a released snapshot")
	}
	s.rt.restores++
	failing := s.rt.cfg.FailRestoreAt > 0 && s.rt.restores == s.rt.cfg.FailRestoreAt
	// One version for every page this restore writes: later writes are
	// newer than the new mark, the restore's own are not.
	m.version++
	var written []trace.Region
	// What was written is recorded even when the restore fails part-way;
	// the caller's account only when it succeeded.
	defer func() {
		s.rt.trafficAll(trace.MemWrite, s.thread, s.agent, written)
		if err == nil && restored != nil {
			restored(n)
		}
	}()
	for i, reg := range s.regions {
		al := reg.live
		if al.freed {
			continue
		}
		k, ranges := s.restoreRegion(al, reg.saved, m.version)
		al.gen = reg.gen // every byte is the saved one again
		n += k
		if written == nil {
			written = ranges // restoreRegion's own: appended to only past its length
		} else {
			written = append(written[:len(written):len(written)], ranges...)
		}
		if failing && len(written) > 0 {
			// The planted failure strikes during the restore's first
			// copy: it wrote this region, and nothing after it.
			return n, fmt.Errorf("%w: restore failed after %d of %d regions", ErrInjected, i+1, len(s.regions))
		}
	}
	if failing {
		// Nothing was dirty, so nothing needed a copy; the failure still
		// strikes in one, the first live region's first page, so that the
		// runtime sees the restore begin (the trace's evidence that the
		// process died there, MEM-5). A restore with no live region makes
		// no copy at all, and has nothing to fail in.
		for _, reg := range s.regions {
			if al := reg.live; !al.freed && len(reg.saved) > 0 {
				hi := min(pageSize, len(reg.saved))
				n += uint64(copy(al.data[:hi], reg.saved[:hi]))
				written = appendRange(written, al.meta.Handle, uint64(hi))
				return n, fmt.Errorf("%w: restore failed in its first copy", ErrInjected)
			}
		}
	}
	s.mark = m.version
	return n, nil
}

// restoreRegion copies back the dirty pages, a run of dirty pages at a
// time, skipping clean chunks whole (under Config.RestoreAll: the whole
// region in one copy), and returns the bytes written and where.
func (s *snapshot) restoreRegion(al *allocation, saved []byte, version uint64) (uint64, []trace.Region) {
	all := s.rt.cfg.RestoreAll
	if all {
		// A runtime without dirty tracking: one copy of the whole region,
		// the fastest plain way to write it back.
		n := uint64(copy(al.data, saved))
		for i := range al.pageStamp {
			al.pageStamp[i] = version
		}
		for c := range al.chunkStamp {
			al.chunkStamp[c] = version
		}
		return n, []trace.Region{{Addr: al.meta.Handle, Bytes: n}}
	}
	var n uint64
	var kept [4]trace.Region // most restores write a run or two: no allocation
	ranges := kept[:0]
	pages := len(al.pageStamp)
	for c, stamp := range al.chunkStamp {
		if stamp <= s.mark {
			continue
		}
		dirty := func(p int) bool { return al.pageStamp[p] > s.mark }
		end := min((c+1)*pagesPerChunk, pages)
		for p := c * pagesPerChunk; p < end; {
			if !dirty(p) {
				p++
				continue
			}
			q := p + 1
			for q < end && dirty(q) {
				q++
			}
			lo, hi := p*pageSize, min(q*pageSize, len(saved))
			n += uint64(copy(al.data[lo:hi], saved[lo:hi]))
			ranges = appendRange(ranges, al.meta.Handle+uint64(lo), uint64(hi-lo))
			for i := p; i < q; i++ {
				al.pageStamp[i] = version
			}
			p = q
		}
		al.chunkStamp[c] = version
	}
	return n, al.regionsOf(ranges)
}

// regionsOf is ranges (of al) to keep in an event: al's one shared whole
// region when they are all of it (a small buffer's restore, every pass),
// else a copy of their own (none: nil).
func (al *allocation) regionsOf(ranges []trace.Region) []trace.Region {
	if len(ranges) == 1 && ranges[0] == (trace.Region{Addr: al.meta.Handle, Bytes: al.meta.Size}) {
		return al.wholeRegion(al.meta)
	}
	return slices.Clone(ranges)
}

// appendRange adds [addr, addr+n) to rs, joining it to the last range when
// they touch (dirty runs that cross a chunk border are one copy).
func appendRange(rs []trace.Region, addr, n uint64) []trace.Region {
	if k := len(rs) - 1; k >= 0 && rs[k].Addr+rs[k].Bytes == addr {
		rs[k].Bytes += n
		return rs
	}
	return append(rs, trace.Region{Addr: addr, Bytes: n})
}

// trafficAll records regions of one agent's memory moved outside a kernel,
// whatever their kind: a snapshot that reads fine-grained memory must show.
// The caller holds mem.mu; the recorder has its own lock.
func (r *Runtime) trafficAll(typ trace.Type, thread hsa.ThreadID, agent hsa.AgentID, regions []trace.Region) {
	rec := r.rec.Load()
	if rec == nil || len(regions) == 0 {
		return
	}
	var n uint64
	for _, g := range regions {
		n += g.Bytes
	}
	rec.EmitRef(&trace.Event{Type: typ, Thread: uint64(thread), Agent: uint64(agent), Bytes: n, Regions: regions})
}

// Release drops the saved bytes.
func (s *snapshot) Release() {
	m := s.rt.mem
	m.mu.Lock()
	s.released = true
	s.regions = nil
	m.mu.Unlock()
}
