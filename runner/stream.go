package runner

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// Tally is what a report says of a trace that was judged as a stream and
// not kept: its size, its passes and the loops the harness cut off.
type Tally struct {
	Events  int
	Passes  int
	Stopped []Stopped
}

// TallyStream counts a trace's events as they arrive. The labels it keeps
// to name a cut-off loop are those of recent dispatches only (a never_ended
// event follows its loop's own events), so its memory stays flat: the
// labels of the last recentLabels dispatches at least, in two generations
// (when one is full it becomes the older, and the older is dropped).
type TallyStream struct {
	t             Tally
	labels, older map[uint64]string
	// known is the dispatch whose label was looked up or kept last: a
	// dispatch's events come together, and its label is kept once.
	known uint64
}

// recentLabels bounds the dispatch labels of one generation.
const recentLabels = 4096

// Add counts e.
func (c *TallyStream) Add(e *trace.Event) {
	c.t.Events++
	switch {
	case e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter:
		c.t.Passes++
	case e.Type == trace.NeverEnded:
		st := Stopped{Dispatch: e.Dispatch, Label: c.label(e.Dispatch)}
		st.Known = st.Label != ""
		if !st.Known {
			st.Label = fmt.Sprintf("dispatch %d", e.Dispatch)
		}
		st.Passes, _ = e.PassOf()
		c.t.Stopped = append(c.t.Stopped, st)
	}
	if e.Dispatch != 0 && e.Label != "" && e.Dispatch != c.known {
		// known stays among the labels: a generation is dropped only as a
		// new label is kept, which becomes known.
		c.known = e.Dispatch
		if c.label(e.Dispatch) == "" {
			if c.labels == nil || len(c.labels) >= recentLabels {
				c.older, c.labels = c.labels, make(map[uint64]string, 64)
			}
			c.labels[e.Dispatch] = e.Label
		}
	}
}

// label is dispatch id's label, when it is one of the recent ones.
func (c *TallyStream) label(id uint64) string {
	if l := c.labels[id]; l != "" {
		return l
	}
	return c.older[id]
}

// Tally is what was counted.
func (c *TallyStream) Tally() *Tally { t := c.t; return &t }

// JudgeStreamed fills r's verdicts from j, the oracles' judgement of a
// trace judged as a stream (check.Stream) for spec s, and from what the
// stream concluded of s's expectations (Stream.Expect: the failed ones and
// the keys not observable); tally says what the trace held.
func JudgeStreamed(r *Result, s spec.Spec, j check.Judgement, expected []check.Violation, unobserved []string, tally *Tally) {
	r.Tally = tally
	settle(r, s, j, expected, unobserved, func() []Stopped { return tally.Stopped })
}

// streamer judges one run's events as they are recorded (Options.Stream).
type streamer struct {
	mu      sync.Mutex // a target abandoned after its grace may still record
	st      *check.Stream
	tally   TallyStream
	header  trace.Header
	spool   *os.File
	buf     *bufio.Writer
	w       *trace.Writer
	err     error // of the spool
	done    bool
	broken  bool // an oracle panicked on the stream
	judging bool // within check.Stream.AddEvent (release)

	judged *check.Judgement // set by finish when the stream judged it
	// The spec's expectations as the stream judged them, with judged.
	expected   []check.Violation
	unobserved []string
}

// newStreamer starts judging a run of s on tg as a stream, or returns nil
// when tg cannot say its header in advance or no temporary file can be
// made (the run is then judged whole). With spool unset the events are
// not copied anywhere: a trace the oracles cannot judge apart is then
// recorded again (a Repeatable target).
// segmentEvents, when not negative, is the least events a streamed
// run's segments hold (check.Stream.SegmentsOfAtLeast); tests set it to 0,
// cutting at every chance, so that both a stream's verdict and its
// fall-back are taken on small traces (export_test.go).
var segmentEvents = -1

func newStreamer(tg target.Target, s spec.Spec, spool bool) *streamer {
	hs, ok := tg.(target.Streaming)
	if !ok {
		return nil
	}
	h := hs.Header(spec.Defaults(s))
	st := &streamer{st: check.NewStream(h), header: h}
	st.st.Expect(s)
	if segmentEvents >= 0 {
		st.st.SegmentsOfAtLeast(segmentEvents)
	}
	if !spool {
		return st
	}
	f, err := os.CreateTemp("", "replayspec-run-*.ndjson")
	if err != nil {
		return nil
	}
	os.Remove(f.Name()) // unlinked: gone with the file, whatever happens
	st.spool, st.buf = f, bufio.NewWriterSize(f, 1<<16)
	st.w, st.err = trace.NewWriter(st.buf, h)
	return st
}

// add takes the next event: counted, judged, and spooled.
func (st *streamer) add(e *trace.Event) {
	st.mu.Lock()
	defer st.release()
	if st.done {
		return
	}
	st.tally.Add(e)
	if !st.broken {
		st.judging = true
		st.st.AddEvent(e)
		st.judging = false
	}
	if st.w != nil && st.err == nil {
		st.err = st.w.Event(e)
	}
}

// release ends add. A panic in an oracle happens in the target's
// goroutine here, which would take it for its own (or, on a driver's
// reader, end the process): the stream stops (judging is still set only
// when AddEvent did not return), and the trace is judged whole, where the
// runner reports a panic as one of judging. One deferred call an event,
// not two: add runs a dozen times a pass.
func (st *streamer) release() {
	if st.judging {
		recover()
		st.broken, st.judging = true, false
	}
	st.mu.Unlock()
}

// finish ends the stream when the target is done with trace t: the
// judgement when the stream could judge it, else the trace read back from
// the spool (or t's own events, when the target kept them after all).
func (st *streamer) finish(t trace.Trace) trace.Trace {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	if len(t.Events) > 0 {
		return t // the target did not discard its events: judged whole
	}
	if j, ok := st.finishStream(); ok && sameHeader(st.header, t.Header) {
		st.judged = &j
		st.expected, st.unobserved = st.st.Expectations()
		return trace.Trace{Header: t.Header}
	}
	if st.spool == nil {
		return t // to be recorded again
	}
	if st.err == nil {
		st.err = st.buf.Flush()
	}
	if st.err == nil {
		_, st.err = st.spool.Seek(0, io.SeekStart)
	}
	if st.err != nil {
		return t
	}
	back, err := trace.Read(bufio.NewReaderSize(st.spool, 1<<20))
	if err != nil {
		st.err = err
		return t
	}
	back.Header = t.Header
	st.tally = TallyStream{} // the whole trace says it now
	return back
}

// finishStream judges the stream's last segment, unless an oracle
// panicked on it (then, or when it panics now, it is judged whole).
func (st *streamer) finishStream() (j check.Judgement, ok bool) {
	if st.broken {
		return j, false
	}
	defer func() {
		if recover() != nil {
			j, ok = check.Judgement{}, false
		}
	}()
	return st.st.Finish()
}

// sameHeader: the trace's own header says what the stream was judged
// under (a driver may write another version, digest or sources than its
// handshake implies).
func sameHeader(want, got trace.Header) bool {
	return want.Trace == got.Trace && want.Digest == got.Digest && slices.Equal(want.Sources, got.Sources)
}

func (st *streamer) close() {
	if st.spool != nil {
		st.spool.Close()
	}
}

// again reports whether the spec must be run again, its events kept: the
// stream could not judge it and kept no copy.
func (st *streamer) again(t trace.Trace) bool {
	return st.judged == nil && st.spool == nil && len(t.Events) == 0
}

// stoppedIn lists the loops the harness cut off in t, or, when st judged
// the trace as a stream, in its tally.
func stoppedIn(t trace.Trace, st *streamer) []Stopped {
	if st != nil && st.judged != nil {
		return st.tally.t.Stopped
	}
	return NeverEnded(t)
}
