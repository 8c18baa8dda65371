package sim

import (
	"errors"
	"fmt"

	"github.com/replayspec/replayspec/internal/hsa"
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
}

type savedRegion struct {
	live  *allocation // identity, not handle: a freed region stays freed
	saved []byte
}

// Snapshot implements hsa.Runtime. It copies only the regions given; the
// engine decides what is tracked (MEM-4).
func (r *Runtime) Snapshot(agent hsa.AgentID, regions []hsa.Allocation) (hsa.Snapshot, error) {
	if _, ok := r.agent(agent); !ok {
		return nil, fmt.Errorf("%w: %d", hsa.ErrUnknownAgent, agent)
	}
	m := r.mem
	m.mu.Lock()
	defer m.mu.Unlock()
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
	s := &snapshot{rt: r, bytes: total, mark: m.version}
	for _, al := range lives {
		s.regions = append(s.regions, savedRegion{live: al, saved: append([]byte(nil), al.data...)})
	}
	return s, nil
}

func (s *snapshot) Bytes() uint64 { return s.bytes }

// Restore writes back the pages written since the snapshot or the previous
// restore and skips regions freed since the snapshot (MEM-4).
func (s *snapshot) Restore() (uint64, error) {
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
	var restored uint64
	for i, reg := range s.regions {
		if failing && i > 0 {
			return restored, fmt.Errorf("%w: restore failed after %d of %d regions", ErrInjected, i, len(s.regions))
		}
		al := reg.live
		if al.freed {
			continue
		}
		restored += s.restoreRegion(al, reg.saved, m.version)
	}
	if failing {
		return restored, fmt.Errorf("%w: restore failed after %d of %d regions", ErrInjected, len(s.regions), len(s.regions))
	}
	s.mark = m.version
	return restored, nil
}

// restoreRegion copies back the dirty pages (all of them under
// Config.RestoreAll), a run of dirty pages at a time, skipping clean
// chunks whole, and returns the bytes written.
func (s *snapshot) restoreRegion(al *allocation, saved []byte, version uint64) uint64 {
	all := s.rt.cfg.RestoreAll
	var n uint64
	pages := len(al.pageStamp)
	for c, stamp := range al.chunkStamp {
		if !all && stamp <= s.mark {
			continue
		}
		dirty := func(p int) bool { return all || al.pageStamp[p] > s.mark }
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
			for i := p; i < q; i++ {
				al.pageStamp[i] = version
			}
			p = q
		}
		al.chunkStamp[c] = version
	}
	return n
}

// Release drops the saved bytes.
func (s *snapshot) Release() {
	m := s.rt.mem
	m.mu.Lock()
	s.released = true
	s.regions = nil
	m.mu.Unlock()
}
