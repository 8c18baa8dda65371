package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// While a spec runs on a target that streams (target.Streaming: the
// simulator, CUDA), its trace goes to FILE.partial line by line as it is
// made, so that a run that is killed, or a GPU driver that takes the
// process down, leaves what was recorded up to that moment. When the spec
// has finished, the whole trace is written to FILE and FILE.partial is
// removed.

// partialFile is where the trace bound for file is written as it is made.
func partialFile(file string) string { return file + ".partial" }

// recordPartial returns the runner.Plan.Record of a run whose traces go to
// plan.traces, or nil when the target does not stream. warn reports a
// partial file that could not be written (the finished trace is still
// written).
func recordPartial(tg target.Target, plan outputPlan, warn func(string)) func(s spec.Spec, run int) (func(trace.Event), func()) {
	st, ok := tg.(target.Streaming)
	if !ok || len(plan.traces) == 0 {
		return nil
	}
	return func(s spec.Spec, run int) (func(trace.Event), func()) {
		file, ok := plan.traces[traceKey(s.Name, run)]
		if !ok {
			return nil, func() {}
		}
		path := partialFile(file)
		f, err := createFile(path)
		if err != nil {
			warn(fmt.Sprintf("--trace-out: %v (the trace is written when the spec ends)", err))
			return nil, func() {}
		}
		// No buffer: each line is one write, whole in the file even if
		// the process dies on the next event.
		w, err := trace.NewWriter(f, st.Header(s))
		p := &partialTrace{f: f, w: w, path: path, err: err}
		return p.event, func() {
			if err := p.close(); err != nil {
				warn(fmt.Sprintf("--trace-out: %s: %v (the trace is written when the spec ends)", path, err))
			}
		}
	}
}

// partialTrace is one run's partial file. A target abandoned after its
// grace may still record after close: those events are dropped.
type partialTrace struct {
	mu   sync.Mutex
	f    *os.File
	w    *trace.Writer
	path string
	err  error // the first write that failed; later events are dropped
}

func (p *partialTrace) event(e trace.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil && p.err == nil {
		p.err = p.w.Event(&e)
	}
}

func (p *partialTrace) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f = nil
	if p.err != nil {
		return p.err
	}
	return err
}
