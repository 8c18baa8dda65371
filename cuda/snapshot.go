package cuda

import (
	"fmt"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// RestoreMode chooses how Snapshot.Restore finds what to write back.
type RestoreMode int

const (
	// RestoreLearned (the default) copies the whole region back on a
	// snapshot's first restore (never slower than a plain copy), restores
	// and finds the changed 4 KiB pages in one compare_restore launch on
	// the second, and from then on copies back just those pages. It relies
	// on what replay relies on: every pass runs the same kernel on the same
	// restored memory, so it writes the same blocks. A kernel whose write
	// set varies between passes needs RestoreCompare.
	RestoreLearned RestoreMode = iota
	// RestoreCompare runs compare_restore on every restore: exact for any
	// kernel, but it reads the region and the snapshot each time.
	RestoreCompare
	// RestoreFull copies every saved byte back (the baseline benchmarks
	// compare with).
	RestoreFull
)

// SetRestoreMode applies to every later Restore of every snapshot.
func (r *Runtime) SetRestoreMode(m RestoreMode) {
	r.mu.Lock()
	r.restoreMode = m
	r.mu.Unlock()
}

// savedRegion is one allocation's saved bytes: in device memory (dev) or,
// when no device memory was left for it, in host memory (host).
type savedRegion struct {
	alloc    allocation
	dev      uint64
	host     []byte
	flagBase uint64 // first page flag (a byte) of this region
	learned  []span
	restores int  // restores so far (driver thread)
	known    bool // learned holds the write set
	whole    bool // the write set covers most of the region: copy it all
}

// snapshot is an hsa.Snapshot; its methods run driver calls on the worker.
type snapshot struct {
	rt      *Runtime
	thread  hsa.ThreadID // who saves and restores: named in the traffic events
	regions []*savedRegion
	bytes   uint64
	nflags  uint64
	flags   uint64 // device page flags, allocated at the first compare

	// since: what wrote device memory since the last restore (or the
	// snapshot); learnedFrom: what had written it before the restore that
	// learned the regions' write sets. A learned set is used only after
	// the same writes (MEM-2; driver thread).
	since, learnedFrom writeLog

	// The copy_ranges list of the learned spans (driver thread).
	list      []uint64
	listFor   []*savedRegion
	listDev   uint64
	listBytes uint64
}

// Snapshot saves each region with one device-to-device copy into a buffer
// of its own, all on the legacy default stream, which waits for every queue.
func (r *Runtime) Snapshot(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation) (hsa.Snapshot, error) {
	return r.SnapshotWithHook(thread, agent, regions, nil)
}

// SnapshotWithHook implements hsa.SnapshotHook: the read and what saved
// records are recorded on the driver thread right behind the copies, so a
// kernel another thread runs next is recorded after them (decision 18.8).
func (r *Runtime) SnapshotWithHook(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation, saved func(bytes uint64)) (hsa.Snapshot, error) {
	if err := r.checkAgent(agent); err != nil {
		return nil, err
	}
	s := &snapshot{rt: r, thread: thread}
	for _, a := range regions {
		live, err := r.lookup(a, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("cuda: snapshot: %w", err)
		}
		if !isDevice(live.Kind) || live.Agent != agent {
			return nil, fmt.Errorf("cuda: snapshot: allocation %#x is %v memory of agent %d, not device memory of agent %d",
				live.Handle, live.Kind, live.Agent, agent)
		}
		s.regions = append(s.regions, &savedRegion{alloc: *live, flagBase: s.nflags})
		s.nflags += blocksFor(live.Size)
		s.bytes += live.Size
	}
	err := r.w.do(func() error {
		d := r.drv
		for _, g := range s.regions {
			dev, err := r.pool.alloc(d, g.alloc.Size)
			if err != nil { // no device memory: keep this region on the host
				g.host = make([]byte, g.alloc.Size)
				if err := d.dtoh(g.host, g.alloc.Handle); err != nil {
					return err
				}
				continue
			}
			g.dev = dev
			if err := d.dtodAsync(dev, g.alloc.Handle, g.alloc.Size, 0); err != nil {
				return err
			}
		}
		if r.open == nil {
			r.open = map[*snapshot]struct{}{}
		}
		r.open[s] = struct{}{}
		// No wait: later work on any queue, copies and frees are ordered
		// after the legacy default stream the copies are on.
		read := make([]trace.Region, len(s.regions))
		for i, g := range s.regions {
			read[i] = trace.Region{Addr: g.alloc.Handle, Bytes: g.alloc.Size}
		}
		r.traffic(trace.MemRead, thread, agent, read)
		if saved != nil {
			saved(s.bytes)
		}
		return nil
	})
	if err != nil {
		s.Release()
		return nil, err
	}
	return s, nil
}

// traffic records device memory the runtime moved outside a kernel on
// behalf of thread (docs/trace.md): what an interposer on the driver sees.
func (r *Runtime) traffic(typ trace.Type, thread hsa.ThreadID, agent hsa.AgentID, regions []trace.Region) {
	if r.rec == nil || len(regions) == 0 {
		return
	}
	var n uint64
	for _, g := range regions {
		n += g.Bytes
	}
	r.rec.Emit(trace.Event{Type: typ, Thread: uint64(thread), Agent: uint64(agent), Bytes: n, Regions: regions})
}

func (s *snapshot) Bytes() uint64 { return s.bytes }

// Release frees the saved copies.
func (s *snapshot) Release() {
	_ = s.rt.w.do(func() error {
		delete(s.rt.open, s)
		for _, g := range s.regions {
			if g.dev != 0 {
				s.rt.pool.release(s.rt.drv, g.dev, g.alloc.Size)
				g.dev = 0
			}
			g.host = nil
		}
		if s.flags != 0 {
			s.rt.pool.release(s.rt.drv, s.flags, 4*((s.nflags+3)/4))
			s.flags = 0
		}
		if s.listDev != 0 {
			s.rt.pool.release(s.rt.drv, s.listDev, s.listBytes)
			s.listDev = 0
		}
		return nil
	})
}

// alive reports whether the region's allocation is still the one saved:
// freed regions are skipped (MEM-4), and a reused address is a new one.
func (s *snapshot) alive(g *savedRegion) bool {
	s.rt.mu.Lock()
	defer s.rt.mu.Unlock()
	live, ok := s.rt.allocs[g.alloc.Handle]
	return ok && live.serial == g.alloc.serial
}

// agentOf is the agent whose memory the snapshot holds (one per snapshot).
func (s *snapshot) agentOf() hsa.AgentID {
	if len(s.regions) == 0 {
		return 0
	}
	return s.regions[0].alloc.Agent
}

// writeLog sums up the device writes of an interval: how many, and a hash
// of each one's kind and operands (a kernel, its grid and arguments; a
// host write's address and length).
type writeLog struct{ n, h uint64 }

func (l *writeLog) add(words ...uint64) {
	l.n++
	h := l.h ^ l.n
	for _, w := range words {
		h = (h ^ w) * 0x100000001b3
	}
	l.h = h
}

// What a device write was, for writeLog.
const (
	wroteByKernel = iota + 1
	wroteFromHost
)

// noteWrite tells every live snapshot that device memory is about to be
// written by words' operation (driver thread). A restore that learned a
// write set from one pass uses it again only when the pass since wrote the
// same way: a tool's dispatch inside a pass, a host write or a kernel
// launched with other arguments writes pages the set does not hold.
func (r *Runtime) noteWrite(words ...uint64) {
	for s := range r.open {
		s.since.add(words...)
	}
}
