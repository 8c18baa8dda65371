package check

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/trace"
)

// columns are what the index reads of every event before it files it (a
// small kind number, the pass, op and phase, the dispatch and thread, and
// whether a callback carries payload flags), one entry an event, in trace
// order. Judge fills them from the events as it indexes them; a Stream
// fills them as each event arrives (segment.Push), while the event is
// still in the cache: filled at judging time, a long segment (a fixed
// loop of 1,000 passes is ~13,000 events, 9 MB) was walked once more from
// memory only for them. push is the one place an entry is computed, and
// TestStreamColumnsAsIndexed holds those a stream hands over equal to
// those made from its events.
type columns struct {
	rows []column
	// What the oracles read of a callback beyond its row (its payload,
	// the payload's size, its dispatch_info), and of a tool_memory (the
	// buffer and its digest): kept aside as the event arrives, so that
	// the first oracle to read them does not fetch the event from memory.
	// A row's aux is its place here, -1 none.
	cbs    []cbAux
	copies []copyAux
	kc     kindCache // spares the switch on the type's string (kinds.go)
}

// column is one event's entry: one row, so that filling it as an event
// arrives is one append.
type column struct {
	pass     uint64  // when hasPass: the event's pass (trace.Event.PassOf)
	dispatch uint64  // the event's dispatch id (0 none)
	thread   uint64  //
	aux      int32   // the callback's place in cbs, the tool_memory's in copies; -1 none
	kind     evKind  // the event's type as a small number (evKindOf)
	op       opPhase // whether its op is CONFIG or PASS and its phase ENTER or EXIT (opPhaseOf)
	hasPass  bool
	payload  bool // a callback whose payload names some flag
}

// cbAux is what the oracles read of a callback beyond its row.
type cbAux struct {
	payload []string
	size    *uint64
	info    *trace.DispatchInfo
}

// copyAux is what the oracles read of a tool_memory beyond its row.
type copyAux struct{ buffer, digest string }

// makeColumns has room for n events.
func makeColumns(n int) columns { return columns{rows: make([]column, 0, n)} }

// columnsOf is the columns of ev, made from its events.
func columnsOf(ev []trace.Event) columns {
	c := makeColumns(len(ev))
	for i := range ev {
		c.push(&ev[i])
	}
	return c
}

// push adds e's entry at the end.
func (c *columns) push(e *trace.Event) { c.pushKind(e, c.kc.of(e.Type)) }

// pushKind is push of e, of kind k (c.kc.of(e.Type)).
func (c *columns) pushKind(e *trace.Event, k evKind) {
	r := column{dispatch: e.Dispatch, thread: e.Thread, kind: k, op: opPhaseOf(e), aux: -1}
	if e.Pass != nil {
		r.pass, r.hasPass = *e.Pass, true
	}
	switch k {
	case ekCallback:
		r.payload = len(e.Payload) > 0
		r.aux = int32(len(c.cbs))
		c.cbs = append(roomFor(c.cbs), cbAux{e.Payload, e.PayloadSize, e.Info})
	case ekToolMemory:
		r.aux = int32(len(c.copies))
		c.copies = append(roomFor(c.copies), copyAux{e.Buffer, e.Digest})
	}
	c.rows = append(roomFor(c.rows), r)
}

// roomFor is s with room for one more, doubled when full: append grows a
// large slice by a quarter, and the columns of a long trace, grown so,
// allocated five times what they held.
func roomFor[T any](s []T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 64))
	}
	return s
}

// Len is the number of entries.
func (c *columns) Len() int { return len(c.rows) }

// reset empties c.
func (c *columns) reset() {
	c.rows, c.cbs, c.copies = c.rows[:0], c.cbs[:0], c.copies[:0]
}

// appendAll adds d's entries at the end.
func (c *columns) appendAll(d *columns) {
	ncb, ncp := int32(len(c.cbs)), int32(len(c.copies))
	for _, r := range d.rows {
		switch {
		case r.aux < 0:
		case r.kind == ekCallback:
			c.cbs = append(c.cbs, d.cbs[r.aux])
			r.aux = ncb
			ncb++
		case r.kind == ekToolMemory:
			c.copies = append(c.copies, d.copies[r.aux])
			r.aux = ncp
			ncp++
		}
		c.rows = append(c.rows, r)
	}
}

// prefix is the first n entries (sharing c's arrays).
func (c *columns) prefix(n int) *columns {
	p := *c
	p.rows = p.rows[:n]
	return &p
}

// cutOut removes entries [lo, hi), as segment.keep removes events, and
// what they kept aside.
func (c *columns) cutOut(lo, hi int) {
	var ncb, ncp int32 // what rows before lo keep aside: their places come first
	for _, r := range c.rows[:lo] {
		switch {
		case r.aux < 0:
		case r.kind == ekCallback:
			ncb++
		case r.kind == ekToolMemory:
			ncp++
		}
	}
	n := copy(c.rows[lo:], c.rows[hi:])
	c.rows = c.rows[:lo+n]
	for i := range c.rows[lo:] {
		r := &c.rows[lo+i]
		switch {
		case r.aux < 0:
		case r.kind == ekCallback:
			c.cbs[ncb], r.aux = c.cbs[r.aux], ncb
			ncb++
		case r.kind == ekToolMemory:
			c.copies[ncp], r.aux = c.copies[r.aux], ncp
			ncp++
		}
	}
	clear(c.cbs[ncb:])
	clear(c.copies[ncp:])
	c.cbs, c.copies = c.cbs[:ncb], c.copies[:ncp]
}

// diff says where c and d differ, "" nowhere (tests).
func (c *columns) diff(d *columns) string {
	if c.Len() != d.Len() {
		return fmt.Sprintf("%d entries, want %d", c.Len(), d.Len())
	}
	for i, r := range c.rows {
		w := d.rows[i]
		if r != w {
			return fmt.Sprintf("entry %d: %+v, want %+v", i, r, w)
		}
		switch {
		case r.aux < 0:
		case r.kind == ekCallback:
			a, b := c.cbs[r.aux], d.cbs[w.aux]
			if !slices.Equal(a.payload, b.payload) || a.size != b.size || a.info != b.info {
				return fmt.Sprintf("entry %d: callback's %+v, want %+v", i, a, b)
			}
		case r.kind == ekToolMemory:
			if a, b := c.copies[r.aux], d.copies[w.aux]; a != b {
				return fmt.Sprintf("entry %d: copy's %+v, want %+v", i, a, b)
			}
		}
	}
	return ""
}

// verifyColumns, set by the package's tests, makes every index built over
// columns handed to it check them against columns made from its events.
var verifyColumns bool
