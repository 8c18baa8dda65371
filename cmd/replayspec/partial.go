package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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

// partials are the partial traces of a run, and the traces bound for a
// comparison with their goldens.
type partials struct {
	tg      target.Target
	plan    outputPlan
	mu      sync.Mutex
	open    map[string]*partialTrace    // by trace file
	goldens map[string]*goldenCandidate // by traceKey
}

func newPartials(tg target.Target, plan outputPlan) *partials {
	return &partials{tg: tg, plan: plan, open: map[string]*partialTrace{}, goldens: map[string]*goldenCandidate{}}
}

// record is the runner.Plan.Record of the run, or nil when the target does
// not stream or no trace is written nor compared with a golden.
func (ps *partials) record() func(s spec.Spec, run int) (func(*trace.Event), func()) {
	st, ok := ps.tg.(target.Streaming)
	if !ok || len(ps.plan.traces) == 0 && len(ps.plan.goldens) == 0 {
		return nil
	}
	return func(s spec.Spec, run int) (func(*trace.Event), func()) {
		var sinks []func(*trace.Event)
		var closes []func()
		if p := ps.partial(st, s, run); p != nil {
			sinks, closes = append(sinks, p.event), append(closes, p.close)
		}
		if c := ps.goldenCandidate(st, s, run); c != nil {
			sinks, closes = append(sinks, c.event), append(closes, c.close)
		}
		done := func() {
			for _, f := range closes {
				f()
			}
		}
		switch len(sinks) {
		case 0:
			return nil, done
		case 1:
			return sinks[0], done
		}
		return func(e *trace.Event) {
			for _, f := range sinks {
				f(e)
			}
		}, done
	}
}

// partial opens the partial file of spec s's run, nil when it writes no
// trace file or cannot.
func (ps *partials) partial(st target.Streaming, s spec.Spec, run int) *partialTrace {
	file, ok := ps.plan.traces[traceKey(s.Name, run)]
	if !ok || special(file) {
		return nil
	}
	out, err := ps.plan.outs.stream(partialFile(file))
	if err != nil {
		return nil // the whole trace is still written when the spec ends
	}
	// No buffer: each line is one write, whole in the file even if the
	// process dies on the next event.
	h := st.Header(s)
	w, err := trace.NewWriter(out, h)
	p := &partialTrace{out: out, w: w, failed: err != nil, header: headerLine(h)}
	if p.failed {
		out.Remove()
	}
	ps.mu.Lock()
	ps.open[file] = p
	ps.mu.Unlock()
	return p
}

// streams reports whether every trace the run writes, or compares with a
// golden, goes to a file as it is made (record): a spec judged as it runs
// (runner.Options.Stream) then holds no trace; its partial file becomes
// its trace (finish), and its golden is compared with the file its events
// went to (golden).
func (ps *partials) streams() bool {
	if len(ps.plan.traces) == 0 && len(ps.plan.goldens) == 0 {
		return true
	}
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
	if p != nil && errors.Is(r.Err, runner.ErrAbandoned) && p.whole() && ps.plan.outs.adopt(partialFile(file), file) == nil {
		return nil
	}
	if p != nil && streamed(r) && p.whole() {
		// Its events are all in the partial file, under the header the
		// target said before it ran; the trace's own (a driver's) may say
		// more (its target): the file then gets that one.
		if p.header == headerLine(r.Trace.Header) && ps.plan.outs.adopt(partialFile(file), file) == nil {
			return nil
		}
		err := ps.plan.outs.write(file, func(w io.Writer) error {
			in, err := os.Open(partialFile(file))
			if err != nil {
				return err
			}
			defer in.Close()
			events, err := underHeader(r.Trace.Header, in)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, events)
			return err
		})
		p.remove()
		return err
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
	failed bool   // a write failed: the file is gone
	header string // its header line
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

// goldenCandidate is the trace of a run bound for a comparison with its
// golden (or to become it, with --update), written as its events come to
// an unlinked temporary file: a spec judged as it runs holds no trace to
// compare.
type goldenCandidate struct {
	mu     sync.Mutex
	f      *os.File
	buf    *bufio.Writer
	w      *trace.Writer
	closed bool
	failed bool
	header string // its header line
}

// goldenCandidate opens the candidate of spec s's run, nil when it has no
// golden or no temporary file can be made (the held trace is compared).
func (ps *partials) goldenCandidate(st target.Streaming, s spec.Spec, run int) *goldenCandidate {
	if _, ok := ps.plan.goldens[s.Name]; !ok {
		return nil
	}
	f, err := scratchFile("replayspec-golden-*.ndjson") // unlinked: gone with the file, whatever happens
	if err != nil {
		return nil
	}
	h := st.Header(s)
	c := &goldenCandidate{f: f, buf: bufio.NewWriterSize(f, 1<<16), header: headerLine(h)}
	c.w, err = trace.NewWriter(c.buf, h)
	c.failed = err != nil
	ps.mu.Lock()
	if old := ps.goldens[traceKey(s.Name, run)]; old != nil {
		old.discard() // a retry's: the last run is the one compared
	}
	ps.goldens[traceKey(s.Name, run)] = c
	ps.mu.Unlock()
	return c
}

func (c *goldenCandidate) event(e *trace.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && !c.failed && c.w.Event(e) != nil {
		c.failed = true
	}
}

func (c *goldenCandidate) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && !c.failed && c.buf.Flush() != nil {
		c.failed = true
	}
	c.closed = true
}

func (c *goldenCandidate) discard() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed, c.failed = true, true
	c.f.Close()
}

// reader is the whole candidate from its start, once closed; nil when a
// write failed or it is still open (an abandoned target may still record).
func (c *goldenCandidate) reader() io.Reader {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed || c.failed {
		return nil
	}
	if _, err := c.f.Seek(0, io.SeekStart); err != nil {
		return nil
	}
	return c.f
}

// golden compares the trace of r with its golden (writes it, with
// update): for a spec judged as it ran, the file its events went to; else
// the held trace (outputPlan.golden).
func (ps *partials) golden(r *runner.Result, update bool) error {
	key := traceKey(r.Spec.Name, r.Run)
	ps.mu.Lock()
	c := ps.goldens[key]
	delete(ps.goldens, key)
	ps.mu.Unlock()
	if c != nil {
		defer c.discard()
		if streamed(*r) {
			if got := c.reader(); got != nil {
				if c.header != headerLine(r.Trace.Header) {
					if got, err := underHeader(r.Trace.Header, got); err == nil {
						return ps.plan.goldenOf(r, got, update)
					}
				} else {
					return ps.plan.goldenOf(r, got, update)
				}
			}
		}
	}
	return ps.plan.golden(r, update)
}

// streamed: r's spec was judged as it ran, its events not kept.
func streamed(r runner.Result) bool { return r.Tally != nil && len(r.Trace.Events) == 0 }

// headerLine is the NDJSON line trace.Write writes for h.
func headerLine(h trace.Header) string {
	var b strings.Builder
	if _, err := trace.NewWriter(&b, h); err != nil {
		return ""
	}
	return b.String()
}

// underHeader is the trace in (an NDJSON trace as written: a header line,
// then events) with h's header line in place of its own.
func underHeader(h trace.Header, in io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(in, 1<<16)
	if _, err := br.ReadString('\n'); err != nil {
		return nil, fmt.Errorf("reading its header back: %w", err)
	}
	return io.MultiReader(strings.NewReader(headerLine(h)), br), nil
}
