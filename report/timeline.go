package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// TimelineEvent is one Chrome trace event (the JSON format Perfetto and
// chrome://tracing open). Times are microseconds.
type TimelineEvent struct {
	Name  string         `json:"name"`
	Cat   string         `json:"cat,omitempty"`
	Phase string         `json:"ph"`
	TS    float64        `json:"ts"`
	Dur   *float64       `json:"dur,omitempty"`
	PID   int            `json:"pid"`
	TID   uint64         `json:"tid"`
	Scope string         `json:"s,omitempty"`
	Args  map[string]any `json:"args,omitempty"`
}

// TimelineFile is the whole Chrome trace-event document.
type TimelineFile struct {
	TraceEvents     []TimelineEvent `json:"traceEvents"`
	DisplayTimeUnit string          `json:"displayTimeUnit"`
}

// queueTrackBase keeps queue tracks apart from application thread ids.
const queueTrackBase = 1 << 20

// Timeline writes the traces of results as Chrome trace-event JSON: a
// process per spec, a track per application thread and per queue, a slice
// per replay window (CONFIG ENTER..EXIT), per pass (PASS ENTER..EXIT) and
// per kernel (start..end), and instants for snapshot, restore, completion
// signals, warnings and the application's completions.
func Timeline(w io.Writer, results []runner.Result, opts Options) error {
	tl, err := NewTimeline(w)
	if err != nil {
		return err
	}
	for _, r := range results {
		if err := tl.Add(r); err != nil {
			return err
		}
	}
	return tl.Close()
}

// TimelineWriter writes a timeline as specs finish: each Add appends one
// spec's process in one write, Close ends the document.
type TimelineWriter struct {
	w     io.Writer
	at    io.WriterAt // a sealed timeline (NewSealedTimeline)
	off   int64       // where a sealed timeline's end starts
	pid   int
	first bool
}

const (
	timelineHead = `{"displayTimeUnit":"ns","traceEvents":[`
	timelineEnd  = "\n]}\n"
)

// NewTimeline starts a timeline document on w.
func NewTimeline(w io.Writer) (*TimelineWriter, error) {
	_, err := io.WriteString(w, timelineHead)
	return &TimelineWriter{w: w, first: true}, err
}

// NewSealedTimeline starts a timeline in a file that is a whole JSON
// document after every Add: each Add writes its events and the document's
// end over the old end, in one write, so that a process killed outright
// between two specs leaves a timeline that opens. Close has nothing left
// to write.
func NewSealedTimeline(w io.WriterAt) (*TimelineWriter, error) {
	_, err := w.WriteAt([]byte(timelineHead+timelineEnd), 0)
	return &TimelineWriter{at: w, off: int64(len(timelineHead)), first: true}, err
}

// Add appends the trace of one result.
func (tl *TimelineWriter) Add(r runner.Result) error {
	return tl.AddFrom(r, EventsOf(r.Trace))
}

// Events hands each event of a trace to each, in order, stopping at its
// first error; it may be called more than once (a timeline reads a trace
// twice).
type Events func(each func(*trace.Event) error) error

// EventsOf is the events of t, held.
func EventsOf(t trace.Trace) Events {
	return func(each func(*trace.Event) error) error {
		for i := range t.Events {
			if err := each(&t.Events[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// timelineChunk is how much of a spec's process AddFrom gathers before it
// writes: a trace read from a file is drawn in bounded memory.
const timelineChunk = 1 << 20

// AddFrom appends the trace of result r, its events read from events (r's
// own trace may hold none: a spec judged as it ran). A sealed timeline is a
// whole document again once the spec's process is written.
func (tl *TimelineWriter) AddFrom(r runner.Result, events Events) error {
	tl.pid++
	name := r.Spec.Name
	if name == "" {
		name = r.Trace.Header.Spec
	}
	if r.Run > 0 {
		name = fmt.Sprintf("%s#%d", name, r.Run)
	}
	var b bytes.Buffer
	write := func(last bool) error {
		if b.Len() == 0 {
			return nil
		}
		if tl.at != nil {
			n := int64(b.Len())
			if last {
				b.WriteString(timelineEnd)
			}
			if _, err := tl.at.WriteAt(b.Bytes(), tl.off); err != nil {
				return err
			}
			tl.off += n
		} else if _, err := tl.w.Write(b.Bytes()); err != nil {
			return err
		}
		b.Reset()
		return nil
	}
	err := timeline(events, tl.pid, name, func(ev TimelineEvent) error {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if !tl.first {
			b.WriteString(",\n")
		} else {
			b.WriteString("\n")
		}
		tl.first = false
		b.Write(data)
		if b.Len() >= timelineChunk {
			return write(false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if tl.at != nil && b.Len() == 0 && !tl.first {
		// The last chunk was written without the end: write it alone.
		_, err := tl.at.WriteAt([]byte(timelineEnd), tl.off)
		return err
	}
	return write(true)
}

// Close ends the document (a sealed one is ended already).
func (tl *TimelineWriter) Close() error {
	if tl.at != nil {
		return nil
	}
	_, err := io.WriteString(tl.w, timelineEnd)
	return err
}

type queueKey struct{ agent, queue uint64 }

// openSlice is a callback ENTER waiting for its EXIT.
type openSlice struct {
	enter trace.Event // the ENTER event
	name  string
	k     sliceKey
}

type sliceKey struct {
	thread, dispatch uint64
	op               trace.Op
	pass             uint64
}

// TimelineOf renders one trace as the events of process pid.
func TimelineOf(t trace.Trace, pid int, name string) []TimelineEvent {
	var out []TimelineEvent
	timeline(EventsOf(t), pid, name, func(ev TimelineEvent) error { out = append(out, ev); return nil }) // no error but emit's
	return out
}

// timeline renders the trace events gives as the events of process pid,
// handing each to emit: the tracks first (a first reading of the events
// finds the threads and queues), then the slices and instants (a second).
func timeline(events Events, pid int, name string, emit func(TimelineEvent) error) error {
	var err error
	out := func(ev TimelineEvent) {
		if err == nil {
			err = emit(ev)
		}
	}
	meta := func(kind string, tid uint64, args map[string]any) {
		out(TimelineEvent{Name: kind, Phase: "M", PID: pid, TID: tid, Args: args})
	}
	meta("process_name", 0, map[string]any{"name": name})
	meta("process_sort_index", 0, map[string]any{"sort_index": pid})

	threads := map[uint64]bool{}
	queues := map[queueKey]bool{}
	if err := events(func(e *trace.Event) error {
		if e.Type == trace.Kernel {
			queues[queueKey{e.Agent, e.Queue}] = true
		} else {
			threads[e.Thread] = true
		}
		return nil
	}); err != nil {
		return err
	}
	for _, th := range slices.Sorted(maps.Keys(threads)) {
		label := fmt.Sprintf("thread %d", th)
		if th == 0 {
			label = "runtime / application end"
		}
		meta("thread_name", th, map[string]any{"name": label})
		meta("thread_sort_index", th, map[string]any{"sort_index": th})
	}
	qs := slices.SortedFunc(maps.Keys(queues), func(a, b queueKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.queue, b.queue))
	})
	qtid := map[queueKey]uint64{}
	for i, q := range qs {
		tid := uint64(queueTrackBase + i)
		qtid[q] = tid
		meta("thread_name", tid, map[string]any{"name": fmt.Sprintf("agent %d queue %d", q.agent, q.queue)})
		meta("thread_sort_index", tid, map[string]any{"sort_index": tid})
	}

	// Slices nest on their thread's track: an EXIT closes every slice
	// opened on that thread after its ENTER (their own EXIT never came),
	// and a loop the harness cut off closes its dispatch's slices.
	stacks := map[uint64][]openSlice{}
	closeTo := func(thread uint64, keep int, at uint64) {
		st := stacks[thread]
		for len(st) > keep {
			o := st[len(st)-1]
			st = st[:len(st)-1]
			if o.k.op != "" {
				out(slice(o.enter, at, o.name+" (no EXIT)", pid, true))
			}
		}
		stacks[thread] = st
	}
	var lastTime uint64
	if err := events(func(ep *trace.Event) error {
		e := *ep
		lastTime = max(lastTime, e.Time)
		switch e.Type {
		case trace.Callback:
			if e.Op != trace.OpConfig && e.Op != trace.OpPass {
				return err
			}
			k := sliceKey{e.Thread, e.Dispatch, e.Op, 0}
			label := fmt.Sprintf("replay window, dispatch %d", e.Dispatch)
			if e.Op == trace.OpPass {
				k.pass, _ = e.PassOf()
				label = fmt.Sprintf("pass %d", k.pass)
			}
			switch e.Phase {
			case trace.PhaseEnter:
				stacks[e.Thread] = append(stacks[e.Thread], openSlice{enter: e, name: label, k: k})
			case trace.PhaseExit:
				st := stacks[e.Thread]
				at := slices.IndexFunc(st, func(o openSlice) bool { return o.k == k })
				if at < 0 {
					return err // an EXIT without its ENTER: the oracles say so
				}
				closeTo(e.Thread, at+1, e.Time)
				o := stacks[e.Thread][at]
				out(slice(o.enter, e.Time, o.name, pid, false))
				stacks[e.Thread] = stacks[e.Thread][:at]
			}
		case trace.Kernel:
			start, end := e.Start, e.End
			if start == 0 && end == 0 {
				start, end = e.Time, e.Time
			}
			d := us(end - min(start, end))
			args := map[string]any{"dispatch": e.Dispatch, "agent": e.Agent, "queue": e.Queue, "seq": e.Seq}
			if e.Signal != 0 {
				args["signal"] = e.Signal
			}
			if e.MemIn != "" {
				args["mem_in"], args["mem_out"] = e.MemIn, e.MemOut
			}
			out(TimelineEvent{Name: e.Kernel, Cat: "kernel", Phase: "X", TS: us(start), Dur: &d,
				PID: pid, TID: qtid[queueKey{e.Agent, e.Queue}], Args: args})
		case trace.Snapshot:
			out(instant(e, "snapshot", pid, map[string]any{"bytes": e.Bytes, "regions": e.Regions}))
		case trace.Restore:
			p, _ := e.PassOf()
			out(instant(e, fmt.Sprintf("restore before pass %d", p), pid, map[string]any{"bytes": e.Bytes, "regions": e.Regions, "pass": p}))
		case trace.Signal:
			label := "signal decremented"
			if e.Value != nil && *e.Value == 0 {
				label = "completion fired"
			}
			args := map[string]any{"signal": e.Signal}
			if e.Value != nil {
				args["value"] = *e.Value
			}
			out(instant(e, label, pid, args))
		case trace.Warning:
			out(instant(e, "warning "+string(e.Code), pid, map[string]any{"code": e.Code, "message": e.Message}))
		case trace.NeverEnded:
			p, _ := e.PassOf()
			out(instant(e, "never ended", pid, map[string]any{"passes": p}))
			st := stacks[e.Thread]
			if at := slices.IndexFunc(st, func(o openSlice) bool { return o.k.dispatch == e.Dispatch }); at >= 0 {
				closeTo(e.Thread, at, e.Time)
			}
		case trace.AppDispatch:
			out(instant(e, "app dispatch "+e.Label, pid, map[string]any{"kernel": e.Kernel, "signal": e.Signal}))
		case trace.AppComplete:
			out(instant(e, "app sees completion of "+e.Label, pid, nil))
		case trace.AppTimeout:
			out(instant(e, "app gave up on "+e.Label, pid, nil))
		}
		return err
	}); err != nil {
		return err
	}
	// An ENTER without its EXIT is a fault worth seeing: draw it to the
	// end of the trace and say so.
	for _, th := range slices.Sorted(maps.Keys(stacks)) {
		closeTo(th, 0, lastTime)
	}
	return err
}

func slice(enter trace.Event, end uint64, name string, pid int, unclosed bool) TimelineEvent {
	d := us(end - min(enter.Time, end))
	args := map[string]any{"dispatch": enter.Dispatch, "seq": enter.Seq}
	if enter.Total != nil {
		args["total"] = *enter.Total
	}
	if enter.UserData != nil {
		args["user_data"] = *enter.UserData
	}
	if unclosed {
		args["unclosed"] = true
	}
	cat := "pass"
	if enter.Op == trace.OpConfig {
		cat = "config"
	}
	return TimelineEvent{Name: name, Cat: cat, Phase: "X", TS: us(enter.Time), Dur: &d, PID: pid, TID: enter.Thread, Args: args}
}

func instant(e trace.Event, name string, pid int, args map[string]any) TimelineEvent {
	if args == nil {
		args = map[string]any{}
	}
	args["seq"] = e.Seq
	if e.Dispatch != 0 {
		args["dispatch"] = e.Dispatch
	}
	return TimelineEvent{Name: name, Cat: string(e.Type), Phase: "i", Scope: "t", TS: us(e.Time), PID: pid, TID: e.Thread, Args: args}
}

// us converts nanoseconds to the format's microseconds.
func us(ns uint64) float64 { return float64(ns) / 1e3 }
