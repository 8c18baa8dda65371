package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/replayspec/replayspec/report"
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

// partials are the partial traces of a run, and the traces spooled for a
// comparison with their goldens, for the timeline or for the HTML page.
type partials struct {
	tg       target.Target
	plan     outputPlan
	spoolAll bool // the run writes a timeline or an HTML page: every spec's trace is spooled
	mu       sync.Mutex
	open     map[string]*partialTrace // by trace file
	spools   map[string]*spooledTrace // by traceKey
}

func newPartials(tg target.Target, plan outputPlan, spoolAll bool) *partials {
	return &partials{tg: tg, plan: plan, spoolAll: spoolAll, open: map[string]*partialTrace{}, spools: map[string]*spooledTrace{}}
}

// record is the runner.Plan.Record of the run, or nil when the target does
// not stream or no trace is written nor compared with a golden.
func (ps *partials) record() func(s spec.Spec, run int) (func(*trace.Event), func()) {
	st, ok := ps.tg.(target.Streaming)
	if !ok || len(ps.plan.traces) == 0 && len(ps.plan.goldens) == 0 && !ps.spoolAll {
		return nil
	}
	return func(s spec.Spec, run int) (func(*trace.Event), func()) {
		var sinks []func(*trace.Event)
		var closes []func()
		if p := ps.partial(st, s, run); p != nil {
			sinks, closes = append(sinks, p.event), append(closes, p.close)
		}
		if c := ps.spool(st, s, run); c != nil {
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

// streams reports whether every trace the run writes, compares with a
// golden or draws on the timeline or the HTML page goes to a file as it is
// made (record): a spec judged as it runs (runner.Options.Stream) then
// holds no trace; its partial file becomes its trace (finish), and its
// golden, timeline and page read the file its events went to (take).
func (ps *partials) streams() bool {
	if len(ps.plan.traces) == 0 && len(ps.plan.goldens) == 0 && !ps.spoolAll {
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
	if streamed(r) && (p == nil || !p.whole()) {
		// Its events went nowhere else: no trace can be written.
		oe := &outputError{Flag: ps.plan.outs.flag(file), Path: file, Err: errors.New("its file could not be written as the events came"),
			Left: "no trace was written (nor kept: its spec was judged as it ran)"}
		if p != nil {
			var pe *outputError
			if errors.As(p.out.Err(), &pe) {
				oe.Err, oe.Left = pe.Err, "no trace was written (nor kept: its partial file is removed too)"
			}
			p.remove()
		}
		return oe
	}
	if p != nil && streamed(r) {
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

// spooledTrace is the trace of a run bound for a comparison with its
// golden (or to become it, with --update), for the timeline or for the
// HTML page, written as
// its events come to an unlinked temporary file: a spec judged as it runs
// holds no trace to read.
type spooledTrace struct {
	mu     sync.Mutex
	f      *os.File
	buf    *bufio.Writer
	w      *trace.Writer
	closed bool
	failed bool
	err    error  // why it failed, when a write did
	header string // its header line
}

// spool opens the spooled trace of spec s's run, nil when nothing reads it
// or no temporary file can be made (the held trace is read then).
func (ps *partials) spool(st target.Streaming, s spec.Spec, run int) *spooledTrace {
	if _, ok := ps.plan.goldens[s.Name]; !ok && !ps.spoolAll {
		return nil
	}
	f, err := scratchFile("replayspec-spool-*.ndjson") // unlinked: gone with the file, whatever happens
	if err != nil {
		ps.mu.Lock()
		ps.spools[traceKey(s.Name, run)] = &spooledTrace{closed: true, failed: true, err: err}
		ps.mu.Unlock()
		return nil
	}
	h := st.Header(s)
	c := &spooledTrace{f: f, buf: bufio.NewWriterSize(f, 1<<16), header: headerLine(h)}
	c.w, err = trace.NewWriter(c.buf, h)
	c.failed = err != nil
	ps.mu.Lock()
	if old := ps.spools[traceKey(s.Name, run)]; old != nil {
		old.discard() // a retry's: the last run is the one read
	}
	ps.spools[traceKey(s.Name, run)] = c
	ps.mu.Unlock()
	return c
}

func (c *spooledTrace) event(e *trace.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && !c.failed {
		if err := c.w.Event(e); err != nil {
			c.failed, c.err = true, err
		}
	}
}

func (c *spooledTrace) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && !c.failed {
		if err := c.buf.Flush(); err != nil {
			c.failed, c.err = true, err
		}
	}
	c.closed = true
}

// discard lets the file go. Nil does nothing.
func (c *spooledTrace) discard() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed, c.failed = true, true
	if c.f != nil {
		c.f.Close()
	}
}

// take is the spooled trace of r, when r's spec was judged as it ran (its
// events not kept) and the file holds them all; nil otherwise (the held
// trace is read then). The caller discards it. The error says why a spec
// judged as it ran has no whole spooled trace: what reads it (its golden,
// the timeline, the page) cannot be made.
func (ps *partials) take(r runner.Result) (*spooledTrace, error) {
	key := traceKey(r.Spec.Name, r.Run)
	ps.mu.Lock()
	c := ps.spools[key]
	delete(ps.spools, key)
	ps.mu.Unlock()
	if !streamed(r) {
		c.discard()
		return nil, nil
	}
	if c == nil {
		if _, golden := ps.plan.goldens[r.Spec.Name]; !golden && !ps.spoolAll {
			return nil, nil
		}
		return nil, errors.New("its events were judged as they came and not kept, and no copy of them was made")
	}
	c.mu.Lock()
	err := c.err
	if err == nil && (!c.closed || c.failed) {
		err = errors.New("its target did not finish recording")
	}
	c.mu.Unlock()
	if err != nil {
		c.discard()
		return nil, err
	}
	return c, nil
}

// reader is the whole spooled trace from its start under header h (the
// trace's own: a driver's may say more than the one written first).
func (c *spooledTrace) reader(h trace.Header) (io.Reader, error) {
	if _, err := c.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if c.header == headerLine(h) {
		return c.f, nil
	}
	return underHeader(h, c.f)
}

// events reads the spooled trace's events, each time from the start.
func (c *spooledTrace) events() report.Events {
	return func(each func(*trace.Event) error) error {
		if _, err := c.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := trace.ReadEach(bufio.NewReaderSize(c.f, 1<<16), func(trace.Header) error { return nil }, each); err != nil {
			return fmt.Errorf("reading its events back from their temporary copy: %w", err)
		}
		return nil
	}
}

// golden compares the trace of r with its golden (writes it, with
// update): the spooled trace sp when r's spec was judged as it ran, else
// the held trace (outputPlan.golden).
func (ps *partials) golden(r *runner.Result, update bool, sp *spooledTrace) error {
	if sp != nil {
		got, err := sp.reader(r.Trace.Header)
		if err != nil {
			return err
		}
		return ps.plan.goldenOf(r, got, update)
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
