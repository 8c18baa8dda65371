package check

import (
	"fmt"

	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/trace"
)

// DID-3 asks that the dispatch id counter advance once per logical
// dispatch: the ids in use, in order, follow each other with no gap. That
// compares each dispatch with the next, which may lie in the next segment
// of a streamed trace (stream.go), so the comparison is a counterSeq that
// takes the ids in increasing order, all at once (Judge) or a segment at a
// time (Stream), and concludes the same either way.

// counted is one id of the sequence and the event that shows it.
type counted struct {
	id    uint64
	label string
	at    int // position in the whole trace
	ev    trace.Event
}

// counterSeq judges a sequence of ids fed in increasing order.
type counterSeq struct {
	seen bool // judges the ids the tool saw (no reservations): its own message, counts instances
	// allow is how many missing ids are excused (a dispatch that died
	// before its reservation was recorded, MEM-5).
	allow int

	last     *counted
	stopped  bool // the first gap was found: the oracles stop there
	abstain  bool // seen: a dispatch not named, or two sharing an id: judged by nothing
	examined int
	found    *Violation
}

// feed takes the next ids, sorted, all above the last fed; it reports
// false when one is not (the caller cannot judge the seam).
func (c *counterSeq) feed(ids []counted) bool {
	for i := range ids {
		cur := &ids[i]
		if c.last != nil && cur.id <= c.last.id {
			if cur.id == c.last.id && c.seen {
				c.abstain = true // two dispatches share an id: DID-1 says so
				continue
			}
			return false
		}
		if c.last != nil && !c.stopped {
			c.compare(c.last, cur)
		}
		c.last = cur
	}
	return true
}

func (c *counterSeq) compare(prev, cur *counted) {
	if c.seen {
		c.examined++
	}
	if gap := int(cur.id - prev.id - 1); gap > 0 && gap <= c.allow {
		c.allow -= gap
		return
	}
	if cur.id == prev.id+1 {
		return
	}
	msg := fmt.Sprintf("dispatch ids jump from %d to %d: the counter advanced without a logical dispatch", prev.id, cur.id)
	if c.seen {
		msg = fmt.Sprintf("the tool saw dispatch id %d for %s and %d for %s, the next logical dispatch: the counter advanced %d times for one dispatch", prev.id, prev.label, cur.id, cur.label, cur.id-prev.id)
	}
	v := Violation{Rule: "DID-3", Message: msg, Dispatch: cur.id, Label: cur.label}
	if r, ok := rules.Lookup("DID-3"); ok {
		v.Requires = r.Text
	}
	switch {
	case prev.at < cur.at:
		v.Events = []trace.Event{prev.ev, cur.ev}
	case prev.at > cur.at:
		v.Events = []trace.Event{cur.ev, prev.ev}
	default:
		v.Events = []trace.Event{cur.ev}
	}
	c.found, c.stopped = &v, true
}

// result is what the sequence concluded: the instances examined and the
// first gap, nothing when it abstained.
func (c *counterSeq) result() (examined int, vs []Violation) {
	if c.abstain {
		return 0, nil
	}
	if c.found != nil {
		vs = []Violation{*c.found}
	}
	return c.examined, vs
}

// seams carries the sequences across the segments of a streamed trace.
type seams struct {
	reserved, seen counterSeq
	offset         int  // the position in the whole trace of the index's first event
	broken         bool // ids came out of order across a seam
	// prologueFrom[i] is prevOnThread of prologue event i, as the whole
	// trace has it (stream.go).
	prologueFrom []int
	scratch      bool // the prologue judged alone: its sequences are dropped
}

// global is position i of the index in the whole trace.
func (x *index) global(i int) int {
	if x.seams != nil {
		return i + x.seams.offset
	}
	return i
}

// counter judges the ids seq (sorted) with c: at once over a whole trace,
// or added to the stream's sequence of the same kind, which concludes at
// its end.
func (x *index) counter(c *counterSeq, seq []counted) []Violation {
	if x.seams == nil {
		c.feed(seq)
		n, vs := c.result()
		if n > 0 {
			x.instances["DID-3"] += n
		}
		return vs
	}
	if x.seams.scratch {
		return nil
	}
	into := &x.seams.reserved
	if c.seen {
		into = &x.seams.seen
		into.seen = true
	}
	into.abstain = into.abstain || c.abstain
	into.allow += c.allow
	if !into.feed(seq) {
		x.seams.broken = true
	}
	return nil
}
