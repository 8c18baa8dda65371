package cuda

import "fmt"

// Restore writes saved bytes back on the legacy default stream and returns
// how many it wrote. See RestoreMode for which bytes.
func (s *snapshot) Restore() (uint64, error) {
	s.rt.mu.Lock()
	mode := s.rt.restoreMode
	s.rt.mu.Unlock()
	var live, compare []*savedRegion
	for _, g := range s.regions {
		if !s.alive(g) {
			continue
		}
		live = append(live, g)
		if g.dev != 0 && mode != RestoreFull && !(mode == RestoreLearned && g.known) && g.alloc.Size <= maxCompareBytes {
			compare = append(compare, g)
		}
	}
	var restored uint64
	err := s.rt.w.do(func() error {
		if len(compare) > 0 {
			if err := s.findChanges(compare, mode == RestoreLearned); err != nil {
				return err
			}
		}
		for _, g := range live {
			n, err := s.copyBack(g, mode)
			if err != nil {
				return err
			}
			restored += n
		}
		return nil // ordered like Snapshot's copies
	})
	return restored, err
}

// maxCompareBytes: the compare kernel indexes 16-byte vectors with 32 bits.
const maxCompareBytes = 16 << 32

// findChanges runs the compare kernel over every region against its saved
// copy, reads the per-block flags back and keeps each region's dirty spans
// in learned (known marks them reusable for later restores).
func (s *snapshot) findChanges(regions []*savedRegion, keep bool) error {
	d := s.rt.drv
	if s.flags == 0 {
		f, err := s.rt.pool.alloc(d, s.nflags*4)
		if err != nil {
			return fmt.Errorf("cuda: restore flags: %w", err)
		}
		s.flags = f
	}
	fill := s.rt.kernels["fill"]
	if err := d.cuLaunch(fill, uint32((s.nflags+255)/256), 256, []uint64{s.flags, 0, s.nflags}, 0); err != nil {
		return err
	}
	cmp := s.rt.kernels["compare"]
	for _, g := range regions {
		vecs := (g.alloc.Size + 15) / 16
		args := []uint64{g.alloc.Handle, g.dev, s.flags + 4*g.flagBase, g.alloc.Size, compareBlockShift}
		if err := d.cuLaunch(cmp, uint32((vecs+255)/256), 256, args, 0); err != nil {
			return fmt.Errorf("%w: compare", err)
		}
	}
	raw := make([]byte, s.nflags*4)
	if err := d.dtoh(raw, s.flags); err != nil { // synchronous: waits for compare
		return err
	}
	for _, g := range regions {
		n := blocksFor(g.alloc.Size)
		flags := make([]uint32, n)
		for i := range flags {
			b := raw[4*(g.flagBase+uint64(i)):]
			flags[i] = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		}
		g.learned = dirtySpans(flags, compareBlockBytes, g.alloc.Size)
		g.known = keep
	}
	return nil
}

// copyBack enqueues one region's copies: the learned or just-found spans,
// or everything (full mode, host-held copies, regions too big to compare).
func (s *snapshot) copyBack(g *savedRegion, mode RestoreMode) (uint64, error) {
	d := s.rt.drv
	if g.dev == 0 {
		return g.alloc.Size, d.htod(g.alloc.Handle, g.host)
	}
	spans := g.learned
	if mode == RestoreFull || g.alloc.Size > maxCompareBytes {
		spans = []span{{0, g.alloc.Size}}
	}
	for _, sp := range spans {
		if err := d.dtodAsync(g.alloc.Handle+sp.off, g.dev+sp.off, sp.n, 0); err != nil {
			return 0, err
		}
	}
	if mode == RestoreCompare {
		g.learned = nil
	}
	return spanBytes(spans), nil
}
