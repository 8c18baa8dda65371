package main

import (
	"errors"
	"sync"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// While a spec runs on a target that streams (target.Streaming: the
// simulator, CUDA), its trace goes to FILE.partial line by line as it is
// made, so that a run that is killed, or a GPU driver that takes the
// process down, leaves what was recorded up to that moment. When the spec
// has finished, the whole trace is written to FILE and FILE.partial is
// removed. A partial file that cannot be written (a full disk) is removed
// at once: it would keep the disk full, and a torn last line is no trace.

// partialFile is where the trace bound for file is written as it is made.
func partialFile(file string) string { return file + ".partial" }

// partials are the partial traces of a run.
type partials struct {
	tg   target.Target
	plan outputPlan
	mu   sync.Mutex
	open map[string]*partialTrace // by trace file
}

func newPartials(tg target.Target, plan outputPlan) *partials {
	return &partials{tg: tg, plan: plan, open: map[string]*partialTrace{}}
}

// record is the runner.Plan.Record of the run, or nil when the target does
// not stream or no trace is written.
func (ps *partials) record() func(s spec.Spec, run int) (func(*trace.Event), func()) {
	st, ok := ps.tg.(target.Streaming)
	if !ok || len(ps.plan.traces) == 0 {
		return nil
	}
	return func(s spec.Spec, run int) (func(*trace.Event), func()) {
		file, ok := ps.plan.traces[traceKey(s.Name, run)]
		if !ok || special(file) {
			return nil, func() {}
		}
		out, err := ps.plan.outs.stream(partialFile(file))
		if err != nil {
			return nil, func() {} // the whole trace is still written when the spec ends
		}
		// No buffer: each line is one write, whole in the file even if
		// the process dies on the next event.
		w, err := trace.NewWriter(out, st.Header(s))
		p := &partialTrace{out: out, w: w, failed: err != nil}
		if p.failed {
			out.Remove()
		}
		ps.mu.Lock()
		ps.open[file] = p
		ps.mu.Unlock()
		return p.event, p.close
	}
}

// streams reports whether every trace the run writes goes to a file as it
// is made (record): a spec judged as it runs (runner.Options.Stream) then
// holds no trace, and its partial file becomes its trace (finish).
func (ps *partials) streams() bool {
	if _, ok := ps.tg.(target.Streaming); !ok {
		return false
	}
	for _, file := range ps.plan.traces {
		if special(file) {
			return false
		}
	}
	return true
}

// finish writes the trace of a finished spec to file: the partial file
// becomes the trace of a target that was abandoned, or of a spec judged as
// it ran, whose events were not kept (its events are all in the file);
// else the whole trace is written and the partial file removed. On
// failure neither is left.
func (ps *partials) finish(file string, r runner.Result) error {
	ps.mu.Lock()
	p := ps.open[file]
	delete(ps.open, file)
	ps.mu.Unlock()
	streamed := r.Tally != nil && len(r.Trace.Events) == 0
	if p != nil && (errors.Is(r.Err, runner.ErrAbandoned) || streamed) && p.whole() && ps.plan.outs.adopt(partialFile(file), file) == nil {
		return nil
	}
	err := writeTrace(ps.plan.outs, file, r.Trace)
	if p != nil {
		p.remove()
	}
	var oe *outputError
	if errors.As(err, &oe) && p != nil {
		oe.Left = "no trace was written (nor kept: its partial file is removed too)"
	}
	return err
}

// partialTrace is one run's partial file. A target abandoned after its
// grace may still record after close: those events are dropped.
type partialTrace struct {
	mu     sync.Mutex
	out    *streamOut
	w      *trace.Writer
	closed bool
	failed bool // a write failed: the file is gone
}

func (p *partialTrace) event(e *trace.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.failed {
		return
	}
	if p.w.Event(e) != nil {
		p.failed = true // streamOut removed the file
	}
}

func (p *partialTrace) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed && !p.failed && p.out.Close() != nil {
		p.failed = true
	}
	p.closed = true
}

// whole reports whether every event reached the file.
func (p *partialTrace) whole() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.failed
}

func (p *partialTrace) remove() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.out.Remove()
}
