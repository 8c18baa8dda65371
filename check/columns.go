package check

import (
	"fmt"

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
	kc   kindCache // spares the switch on the type's string (kinds.go)
}

// column is one event's entry: one row, so that filling it as an event
// arrives is one append.
type column struct {
	pass     uint64 // when hasPass: the event's pass (trace.Event.PassOf)
	dispatch uint64 // the event's dispatch id (0 none)
	thread   uint64
	kind     evKind  // the event's type as a small number (evKindOf)
	op       opPhase // whether its op is CONFIG or PASS and its phase ENTER or EXIT (opPhaseOf)
	hasPass  bool
	payload  bool // a callback whose payload names some flag
}

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
func (c *columns) push(e *trace.Event) {
	k := c.kc.of(e.Type)
	r := column{dispatch: e.Dispatch, thread: e.Thread, kind: k, op: opPhaseOf(e)}
	if e.Pass != nil {
		r.pass, r.hasPass = *e.Pass, true
	}
	r.payload = k == ekCallback && len(e.Payload) > 0
	c.rows = append(c.rows, r)
}

// Len is the number of entries.
func (c *columns) Len() int { return len(c.rows) }

// truncate keeps the first n entries.
func (c *columns) truncate(n int) { c.rows = c.rows[:n] }

// appendAll adds d's entries at the end.
func (c *columns) appendAll(d *columns) { c.rows = append(c.rows, d.rows...) }

// prefix is the first n entries (sharing c's arrays).
func (c *columns) prefix(n int) *columns {
	p := *c
	p.truncate(n)
	return &p
}

// cutOut removes entries [lo, hi), as segment.keep removes events.
func (c *columns) cutOut(lo, hi int) {
	n := copy(c.rows[lo:], c.rows[hi:])
	c.rows = c.rows[:lo+n]
}

// diff says where c and d differ, "" nowhere (tests).
func (c *columns) diff(d *columns) string {
	if c.Len() != d.Len() {
		return fmt.Sprintf("%d entries, want %d", c.Len(), d.Len())
	}
	for i := range c.rows {
		if c.rows[i] != d.rows[i] {
			return fmt.Sprintf("entry %d: %+v, want %+v", i, c.rows[i], d.rows[i])
		}
	}
	return ""
}

// verifyColumns, set by the package's tests, makes every index built over
// columns handed to it check them against columns made from its events.
var verifyColumns bool
