package sim

import "github.com/replayspec/replayspec/trace"

// A replay loop runs the same kernel on the same restored bytes pass after
// pass, so its kernel events would hash the same buffers to the same
// digests every pass (XXH3 at ~10-18 GB/s here is 60-100 µs a pass per MiB saved; FNV-1a, trace v2's, was 2 ms).
// Instead each allocation carries a content generation: a number that
// changes whenever its bytes may have changed, and comes back only where
// they provably came back. Equal generations of one allocation mean equal
// bytes, so a digest is computed once per distinct content. The values are
// exactly trace.Digest's (docs/trace.md); only the repetition is saved.
//
// Where a generation comes back:
//   - a restore that brought every region back sets each region to the
//     generation it had when the snapshot copied it;
//   - a kernel run again on inputs of the same generations, with the same
//     scalar and grid, writes the same bytes (every library kernel is a
//     function of its inputs), so its outputs get the generations the
//     first such run gave them.
// Everything else that writes takes a new generation.

// contents names the bytes of up to maxBuffers allocations, in order.
type contents struct {
	lives [maxBuffers]*allocation
	gens  [maxBuffers]uint64
}

// same reports whether c and d name the same bytes. Element by element:
// == on the struct calls the runtime's compare, four times a pass.
func (c *contents) same(d *contents) bool {
	for i := range c.lives {
		if c.gens[i] != d.gens[i] || c.lives[i] != d.lives[i] {
			return false
		}
	}
	return true
}

// contentsOf captures the current generations of lives.
func contentsOf(lives []*allocation) contents {
	var c contents
	for i, al := range lives {
		c.lives[i], c.gens[i] = al, al.gen
	}
	return c
}

// memoSize bounds both caches: a loop needs two entries (before and after
// its kernel); a run that never repeats only ever misses.
const memoSize = 8

type digestEntry struct {
	key    contents
	digest string
}

type runKey struct {
	kernel      *kernelDef
	in          contents
	scalar      int32
	items, grid uint64
}

type runEntry struct {
	key runKey
	out [maxBuffers]uint64 // generations the run gave the buffers it wrote
}

// memo holds the most recent digests and kernel runs, round-robin. It is
// guarded by memory.mu.
type memo struct {
	digests  [memoSize]digestEntry
	nextDig  int
	runs     [memoSize]runEntry
	nextRun  int
	computed int // digests computed, not found (tests read it)
}

// digest returns trace.Digest of the buffers c names (their bytes are
// bufs), computing it only for contents it has not seen recently.
func (m *memo) digest(c contents, bufs [][]byte) string {
	for i := range m.digests {
		if e := &m.digests[i]; e.digest != "" && e.key.same(&c) {
			return e.digest
		}
	}
	d := trace.Digest(bufs...)
	m.computed++
	m.digests[m.nextDig] = digestEntry{c, d}
	m.nextDig = (m.nextDig + 1) % memoSize
	return d
}

// ran gives the buffers a kernel wrote their generations after a run: the
// ones an identical earlier run gave them, else new ones from next.
func (m *memo) ran(k runKey, written []*allocation, next func() uint64) {
	for i := range m.runs {
		// The input's generations differ from run to run unless the run
		// repeats: compared first, they settle most entries at once.
		if e := &m.runs[i]; e.key.in.same(&k.in) && e.key.kernel != nil && e.key.kernel == k.kernel &&
			e.key.scalar == k.scalar && e.key.items == k.items && e.key.grid == k.grid {
			for j, al := range written {
				al.gen = e.out[j]
			}
			return
		}
	}
	e := runEntry{key: k}
	for j, al := range written {
		al.gen = next()
		e.out[j] = al.gen
	}
	m.runs[m.nextRun] = e
	m.nextRun = (m.nextRun + 1) % memoSize
}
