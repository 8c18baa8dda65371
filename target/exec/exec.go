package exectarget

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// ExecOptions bound what a driver may do. The zero value takes the
// defaults below.
type ExecOptions struct {
	// HandshakeTimeout bounds the wait for the handshake line (10 s).
	HandshakeTimeout time.Duration
	// Timeout bounds one spec when the caller's context has no deadline
	// (60 s); the runner's per-spec timeout wins when it is set.
	Timeout time.Duration
	// MaxBytes is the trace budget: what a driver may write on stdout for
	// one spec (DefaultMaxBytes). Past it the driver is killed and the spec
	// is one error wrapping target.ErrOverBudget that names the budget and
	// BudgetHint; its cut trace is not judged.
	MaxBytes int64
	// BudgetHint says how to raise MaxBytes, in the error of a driver past
	// it (default: the CLI's flag, --max-trace-mib).
	BudgetHint string
	// MaxLines caps the lines (0: none; the bytes bound them, a line being
	// at least some 20 bytes); past it the driver is killed as flooding.
	MaxLines int
	// StderrTail is how much of the end of stderr is kept (8 KiB).
	StderrTail int
}

func (o ExecOptions) withDefaults() ExecOptions {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.BudgetHint == "" {
		o.BudgetHint = "raise it with --max-trace-mib"
	}
	if o.MaxLines <= 0 {
		o.MaxLines = math.MaxInt
	}
	if o.StderrTail <= 0 {
		o.StderrTail = 8 << 10
	}
	return o
}

// DefaultMaxBytes is the default trace budget of a driver's stdout for one
// spec: 1 GiB, about 9 times what a 10,000-dispatch spec writes (115 MiB), and
// more than a spec within the default --memory-budget records in-process.
const DefaultMaxBytes = 1 << 30

// maxLine bounds one line of driver output.
const maxLine = 4 << 20

// lastShown is how many of the last lines read an error shows.
const lastShown = 5

// Exec is an external port behind the driver protocol
// (docs/driver-protocol.md): one process per spec, handshake first, the
// spec as JSON on stdin, the trace as NDJSON on stdout.
type Exec struct {
	command string
	argv    []string
	opts    ExecOptions
	hs      driver.Handshake

	mu     sync.Mutex
	stderr map[string]string // spec name -> stderr tail of its last run
}

// Open returns the target an exec:COMMAND value names.
func Open(command string) (*Exec, error) { return NewExec(command, ExecOptions{}) }

// NewExec starts the driver once without a spec to read its handshake
// (the probe), so that capabilities are known before any spec runs.
func NewExec(command string, opts ExecOptions) (*Exec, error) {
	argv, err := splitCommand(command)
	if err != nil {
		return nil, fmt.Errorf("target exec:%s: %w", command, err)
	}
	path, err := resolve(argv[0])
	if err != nil {
		return nil, &target.Unavailable{Reason: fmt.Sprintf("target exec:%s: cannot find the driver program: %v", command, err)}
	}
	argv[0] = path
	e := &Exec{command: command, argv: argv, opts: opts.withDefaults(), stderr: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.HandshakeTimeout+5*time.Second)
	defer cancel()
	hs, _, err := e.session(ctx, "(handshake probe)", nil, nil)
	if err != nil {
		return nil, err
	}
	e.hs = hs
	return e, nil
}

// resolve finds the driver program. "replayspec" names this very program
// when it is not on PATH, so that exec:"replayspec driver" works from a
// build tree.
func resolve(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil || name != "replayspec" {
		return path, err
	}
	self, serr := os.Executable()
	if serr == nil && strings.HasPrefix(filepath.Base(self), "replayspec") {
		return self, nil
	}
	return "", err
}

// Name implements Target.
func (e *Exec) Name() string { return "exec:" + e.command }

// Handshake is what the driver said it is and claims.
func (e *Exec) Handshake() driver.Handshake { return e.hs }

// Capabilities implements Capable: the services and behaviours the driver
// claims (its rule families are in Families).
func (e *Exec) Capabilities() []string {
	var out []string
	for _, c := range e.hs.Capabilities {
		if !slices.Contains(spec.RuleFamilies, c) {
			out = append(out, c)
		}
	}
	return out
}

// Families lists the rule families the driver claims; none named means
// it claims them all.
func (e *Exec) Families() []string {
	var out []string
	for _, c := range e.hs.Capabilities {
		if slices.Contains(spec.RuleFamilies, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return slices.Clone(spec.RuleFamilies)
	}
	return out
}

// Stderr returns the tail of what the driver wrote on stderr during its
// last run of the named spec.
func (e *Exec) Stderr(specName string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stderr[specName]
}

// Run implements Target. opts.Faults does not reach an external port.
// opts.Sink sees the events once the driver is done; with opts.Discard it
// sees each as the driver writes it, and the trace returned holds the
// header only. What is not held is not held to the trace budget either
// (MaxBytes bounds what a trace costs to hold).
func (e *Exec) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	body, err := json.Marshal(spec.Defaults(s))
	if err != nil {
		return trace.Trace{}, fmt.Errorf("target %s: spec %s: %w", e.Name(), s.Name, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.Timeout)
		defer cancel()
	}
	var live func(*trace.Event)
	if opts.Sink != nil && opts.Discard {
		live = opts.Sink
	}
	_, t, err := e.session(ctx, s.Name, body, live)
	if opts.Sink != nil && live == nil {
		for i := range t.Events {
			opts.Sink(&t.Events[i])
		}
	}
	return t, err
}

// Header implements target.Streaming: the header a driver writes, from its
// handshake. A driver that writes another (another version, digest or
// sources) is judged by its own, whole.
func (e *Exec) Header(s spec.Spec) trace.Header {
	return trace.Header{Trace: trace.Version, Digest: trace.DigestXXH3, Spec: s.Name, Target: e.Name(),
		Implementation: e.hs.Implementation.Name, Sources: e.hs.ReportedSources()}
}

// ExecError is a driver that broke down on a spec: what happened, the last
// lines it wrote and the end of its stderr.
type ExecError struct {
	Command string
	Spec    string
	What    string // crashed, timed out, flooded, bad output, stopped half-way, protocol
	Detail  string
	Events  int      // events read before it happened
	Last    []string // the last lines read from stdout, as written
	Stderr  string
}

func (e *ExecError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "driver %q on spec %s: %s: %s", e.Command, e.Spec, e.What, e.Detail)
	if len(e.Last) > 0 {
		fmt.Fprintf(&b, "\n  events read: %d; the last lines:", e.Events)
		for _, l := range e.Last {
			b.WriteString("\n    " + l)
		}
	} else {
		fmt.Fprintf(&b, "\n  events read: %d", e.Events)
	}
	if s := strings.TrimRight(e.Stderr, "\n"); s != "" {
		b.WriteString("\n  stderr (tail):\n" + indentLines(s, "    "))
	} else {
		b.WriteString("\n  stderr: (empty)")
	}
	return b.String()
}

// Unwrap is target.ErrOverBudget for a driver past its trace budget, so
// that the runner reports the budget and judges nothing.
func (e *ExecError) Unwrap() error {
	if e.What == whatBudget {
		return target.ErrOverBudget
	}
	return nil
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// Kinds of breakdown (ExecError.What).
const (
	whatCrashed  = "crashed"
	whatTimeout  = "timed out"
	whatFlood    = "flooded its output"
	whatBudget   = "over its trace budget"
	whatBad      = "bad output"
	whatHalfWay  = "stopped half-way"
	whatProtocol = "protocol"
	whatStart    = "cannot start"
	whatStopped  = "stopped" // the run was interrupted (SIGINT, SIGTERM), not out of time
)

// session runs the driver once: handshake, then the spec (none for the
// probe), then the trace. It never outlives ctx by more than a moment.
func (e *Exec) session(ctx context.Context, name string, body []byte, each func(*trace.Event)) (driver.Handshake, trace.Trace, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The driver runs under a reaper where there is one (reaper_linux.go),
	// so that nothing it starts outlives it; else in a process group of its
	// own, killed whole.
	var cmd *exec.Cmd
	var status *os.File // the reaper's line on how the driver ended
	if reaperOn {
		var err error
		if cmd, status, err = reaperCommand(ctx, e.argv); err != nil {
			return driver.Handshake{}, trace.Trace{}, err
		}
		defer status.Close()
	} else {
		cmd = exec.CommandContext(ctx, e.argv[0], e.argv[1:]...)
		ownProcessGroup(cmd)
	}
	end := func() {
		if status != nil {
			_ = stopReaper(cmd)
		} else {
			_ = killGroup(cmd)
		}
	}
	tail := &tailWriter{max: e.opts.StderrTail}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return driver.Handshake{}, trace.Trace{}, err
	}
	// stdout and stderr are our own pipes, not StdoutPipe or a Writer, so
	// that Wait returns when the driver exits: a child it left behind
	// holding them cannot keep us waiting, and its output stays readable.
	pr, pw, err := os.Pipe()
	if err != nil {
		return driver.Handshake{}, trace.Trace{}, err
	}
	defer pr.Close()
	er, ew, err := os.Pipe()
	if err != nil {
		pw.Close()
		return driver.Handshake{}, trace.Trace{}, err
	}
	defer er.Close()
	cmd.Stdout, cmd.Stderr = pw, ew
	fail := func(what, format string, args ...any) *ExecError {
		return &ExecError{Command: e.command, Spec: name, What: what, Detail: fmt.Sprintf(format, args...)}
	}
	err = cmd.Start()
	pw.Close()
	ew.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the reaper's end of its status pipe
	}
	if err != nil {
		return driver.Handshake{}, trace.Trace{}, fail(whatStart, "%v", err)
	}
	live.add(cmd, end)
	defer live.remove(cmd)
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if status != nil {
			// The reaper's exit is its own; the driver's is on its line.
			if driverErr, ok := readStatus(status); ok {
				err = driverErr
			}
		}
		waited <- err
	}()
	stderrDone := make(chan struct{})
	go func() { _, _ = io.Copy(tail, er); close(stderrDone) }()

	var (
		killOnce sync.Once
		killed   *ExecError // why we killed it, if we did
	)
	// stopReading gives up on the pipes a moment from now: a grandchild
	// outside the group may still hold them.
	stopReading := func(after time.Duration) {
		time.AfterFunc(after, func() {
			_ = pr.SetReadDeadline(time.Now())
			_ = er.SetReadDeadline(time.Now())
		})
	}
	kill := func(x *ExecError) {
		killOnce.Do(func() {
			killed = x
			cancel()
			stopReading(2 * time.Second)
		})
	}

	rd := &streamReader{maxBytes: e.opts.MaxBytes, maxLines: e.opts.MaxLines, hint: e.opts.BudgetHint,
		handshake: make(chan handshakeLine, 1), ended: make(chan struct{})}
	if each != nil {
		rd.maxBytes = math.MaxInt64 // nothing is held
		rd.live(each)
	}
	read := make(chan struct{})
	go func() { rd.read(pr); close(read) }()

	deadline := func() string {
		if d, ok := ctx.Deadline(); ok {
			return fmt.Sprintf(" (the per-spec timeout ended at %s)", d.Format("15:04:05.000"))
		}
		return ""
	}
	// outOfTime says why ctx ended: the time ran out (what), or the run
	// was stopped (an interrupt is not a timeout, nor reported as one).
	outOfTime := func(what, stage string) *ExecError {
		if !errors.Is(parent.Err(), context.DeadlineExceeded) {
			return fail(whatStopped, "the run was interrupted %s; the driver was ended", stage)
		}
		return fail(whatTimeout, "%s before the deadline%s; killed", what, deadline())
	}

	// 1. The handshake.
	var hs driver.Handshake
	noHandshake := false
	hsTimer := time.NewTimer(e.opts.HandshakeTimeout)
	defer hsTimer.Stop()
	select {
	case h := <-rd.handshake:
		switch {
		case errors.Is(h.err, errNoHandshake):
			noHandshake = true // it exited or closed stdout: its exit says more
		case h.err != nil:
			kill(fail(whatProtocol, "%v", h.err))
		default:
			hs = h.hs
			if err := hs.Check(spec.Capabilities, spec.RuleFamilies); err != nil {
				kill(fail(whatProtocol, "%v", err))
			}
		}
	case <-hsTimer.C:
		kill(fail(whatTimeout, "no handshake line within %s; killed", e.opts.HandshakeTimeout))
	case <-ctx.Done():
		kill(outOfTime("no handshake", "before its handshake"))
	}

	// 2. The spec, written while we read so that neither side blocks.
	wrote := make(chan error, 1)
	if killed == nil && !noHandshake && body != nil {
		go func() {
			_, err := stdin.Write(body)
			wrote <- errors.Join(err, stdin.Close())
		}()
	} else {
		stdin.Close()
		wrote <- nil
	}

	// 3. The trace, until the driver closes stdout, or until it has written
	// its end line and exited: then the trace is complete, and whatever
	// it left running is ended with its process group.
	var exitErr error
	exited := false
	ended := rd.ended
	finish := func() {
		end()
		stopReading(200 * time.Millisecond)
	}
	for reading := true; reading; {
		select {
		case <-read:
			reading = false
			if rd.err != nil {
				what := whatBad
				switch {
				case rd.overBudget:
					what = whatBudget
				case rd.flood:
					what = whatFlood
				}
				kill(fail(what, "%v; killed", rd.err))
			}
		case <-ended:
			ended = nil
			if exited && exitErr == nil {
				finish()
			}
		case exitErr = <-waited:
			exited, waited = true, nil
			if ended == nil && exitErr == nil {
				finish()
			}
		case <-ctx.Done():
			kill(outOfTime("no complete trace", "before its trace was complete"))
			<-read
			reading = false
		}
	}

	// 4. Its exit.
	if !exited {
		select {
		case exitErr = <-waited:
		case <-ctx.Done():
			kill(outOfTime("closed stdout but did not exit", "before it exited"))
			exitErr = <-waited
		}
	}
	end() // leave nothing of the driver running
	select {
	case <-stderrDone:
	case <-time.After(time.Second): // a grandchild outside the group holds stderr
		_ = er.SetReadDeadline(time.Now())
		<-stderrDone
	}
	select {
	case <-wrote:
	case <-time.After(time.Second): // Wait closed stdin; the write ends soon
	}
	stderr := tail.String()
	if body != nil {
		e.mu.Lock()
		e.stderr[name] = stderr
		e.mu.Unlock()
	}

	// 5. What we have, and what went wrong first.
	t, parseErr := rd.trace()
	if body != nil && t.Header.Trace == "" {
		// Nothing of the trace came (a driver stopped or killed first):
		// the file still gets a header check can read, with the sources
		// the handshake declared (none without one).
		t.Header = trace.Header{Trace: trace.Version, Digest: trace.DigestXXH3, Spec: name, Target: e.Name(), Implementation: hs.Implementation.Name, Sources: []trace.Source{}}
		if hs.Protocol != "" {
			t.Header.Sources = hs.ReportedSources()
		}
	}
	var pe *trace.ParseError
	if errors.As(parseErr, &pe) {
		// Count lines as the driver wrote them: the handshake is line 1.
		parseErr = fmt.Errorf("stdout line %d (trace line %d): %w", pe.Line+1, pe.Line, pe.Err)
	}
	x := killed
	var se *startError
	switch {
	case x != nil:
	case errors.As(exitErr, &se):
		x = fail(whatStart, "%s", se.msg)
	case exitErr != nil && noHandshake:
		x = fail(whatCrashed, "%s before writing its handshake", describeExit(exitErr))
	case exitErr != nil:
		x = fail(whatCrashed, "%s", describeExit(exitErr))
	case noHandshake:
		x = fail(whatProtocol, "closed stdout without writing a handshake line {\"protocol\":%q,...}", driver.Version)
	case parseErr != nil:
		x = fail(whatBad, "%v", parseErr)
	case body == nil && rd.lines > 0:
		x = fail(whatProtocol, "wrote %d lines after its handshake although no spec was sent (stdin closed empty means: handshake only)", rd.lines)
	case body != nil && rd.lines == 0:
		x = fail(whatHalfWay, "exited 0 after its handshake without writing a trace")
	case body != nil && rd.end == nil:
		x = fail(whatHalfWay, "the trace has no end line {\"end\":N}: the output was cut after %d events", rd.events(t))
	case body != nil && rd.end.End != rd.events(t):
		x = fail(whatHalfWay, "the end line says %d events but %d were read", rd.end.End, rd.events(t))
	case body != nil:
		if err := checkSources(hs, t); err != nil {
			x = fail(whatBad, "%v", err)
		}
	}
	if x == nil {
		return hs, t, nil
	}
	if exitErr != nil && x.What != whatCrashed && killed == nil {
		x.Detail += "; and it " + describeExit(exitErr)
	}
	if x.What == whatCrashed && parseErr != nil {
		x.Detail += "; its output: " + parseErr.Error()
	}
	x.Events = rd.events(t)
	if rd.overBudget {
		x.Events = rd.dropped // read, then dropped unjudged
	}
	x.Last = rd.lastLines()
	x.Stderr = stderr
	return hs, t, x
}

// checkSources keeps a trace to what its driver declared: the header's
// sources are the handshake's (its profile), and every event comes from one
// of them, so that no rule is judged on evidence the port said it cannot
// give, and none is left unjudged that it said it gives.
func checkSources(hs driver.Handshake, t trace.Trace) error {
	want := hs.ReportedSources()
	if !driver.SameSources(t.Header.Sources, want) {
		return fmt.Errorf("the trace header reports sources %v, but the handshake declared %v", t.Header.Sources, want)
	}
	for _, ev := range t.Events {
		if src, ok := ev.Type.Source(); ok && !t.Header.Reports(src) {
			return fmt.Errorf("event seq %d is a %s event, of source %q, which the trace header does not report (sources %v)", ev.Seq, ev.Type, src, t.Header.Sources)
		}
	}
	return nil
}

// driverExit is how a driver run under the reaper ended, as the reaper
// saw it: an exit status, or the signal that killed it.
type driverExit struct {
	code   int
	signal syscall.Signal
}

func (d *driverExit) Error() string { return describeExit(d) }

// startError is a driver the reaper could not start.
type startError struct{ msg string }

func (s *startError) Error() string { return "cannot start: " + s.msg }

func describeExit(err error) string {
	var de *driverExit
	if errors.As(err, &de) {
		if de.signal != 0 {
			return "was killed by " + signalName(de.signal)
		}
		return fmt.Sprintf("exited with status %d", de.code)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by " + signalName(ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return err.Error()
}

type handshakeLine struct {
	hs  driver.Handshake
	err error
}

// streamReader splits a driver's stdout into the handshake, the trace
// lines and the end line, within the caps.
type streamReader struct {
	maxBytes  int64
	maxLines  int
	handshake chan handshakeLine

	buf   bytes.Buffer // the trace lines, header first
	lines int          // trace lines read (header and events)
	// With live set, the trace lines go through pw to a reader that
	// parses them as they come (trace.ReadEach) instead of into buf.
	pw         *io.PipeWriter
	bw         *bufio.Writer // over pw: handing the pipe a line at a time would cost a goroutine switch each
	parsed     chan liveTrace
	liveEvents int
	pwDone     bool // the parser stopped at a bad line
	end        *driver.End
	ended      chan struct{} // closed when the end line has been read
	last       []string
	err        error
	flood      bool
	overBudget bool // past maxBytes, the user's budget
	dropped    int  // events read before the budget was passed, dropped
	hint       string
}

var (
	errFlood       = errors.New("flood")
	errNoHandshake = errors.New("no handshake")
)

// capped fails once more than max bytes were read.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, errFlood
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// liveTrace is what the live reader made of the trace lines.
type liveTrace struct {
	header trace.Header
	events int
	err    error
}

// live makes r hand each event to each as its line is read.
func (r *streamReader) live(each func(*trace.Event)) {
	pr, pw := io.Pipe()
	r.pw, r.bw, r.parsed = pw, bufio.NewWriterSize(pw, 64<<10), make(chan liveTrace, 1)
	go func() {
		var lt liveTrace
		lt.err = trace.ReadEach(pr, func(h trace.Header) error {
			lt.header = h
			return nil
		}, func(ev *trace.Event) error {
			lt.events++
			each(ev)
			return nil
		})
		pr.CloseWithError(lt.err) // a bad line: the writer stops there
		r.parsed <- lt
	}()
}

// events is how many events of t were read (handed on, when live).
func (r *streamReader) events(t trace.Trace) int {
	if r.pw != nil {
		return r.liveEvents
	}
	return len(t.Events)
}

func (r *streamReader) remember(line []byte) {
	s := string(line)
	if len(s) > 300 {
		s = s[:300] + fmt.Sprintf("... (%d bytes)", len(line))
	}
	r.last = append(r.last, s)
	if len(r.last) > lastShown {
		r.last = r.last[1:]
	}
}

func (r *streamReader) lastLines() []string { return r.last }

func (r *streamReader) read(in io.Reader) {
	sc := bufio.NewScanner(&capped{r: in, left: r.maxBytes})
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	gotHandshake := false
	defer func() {
		if !gotHandshake {
			err := r.err
			if err == nil {
				err = errNoHandshake
			}
			r.handshake <- handshakeLine{err: err}
		}
	}()
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r.remember(line)
		if !gotHandshake {
			gotHandshake = true
			var h driver.Handshake
			if err := driver.Decode(line, &h); err != nil {
				r.handshake <- handshakeLine{err: fmt.Errorf("the first line is not a handshake {\"protocol\":%q,...}: %v", driver.Version, err)}
				return
			}
			r.handshake <- handshakeLine{hs: h}
			continue
		}
		if r.end != nil {
			r.err = fmt.Errorf("output after the end line: %.80q", line)
			return
		}
		if r.lines > 0 && driver.IsEnd(line) {
			var end driver.End
			if err := driver.Decode(line, &end); err != nil {
				r.err = fmt.Errorf("bad end line: %v", err)
				return
			}
			r.end = &end
			close(r.ended)
			continue
		}
		r.lines++
		if r.lines > r.maxLines {
			r.err, r.flood = fmt.Errorf("more than %d lines", r.maxLines), true
			return
		}
		if r.pw != nil {
			// After the trace's first bad line the parser is gone: the
			// rest is read and dropped, as a whole trace is read to its
			// end before it is parsed.
			if !r.pwDone {
				r.bw.Write(line)
				r.pwDone = r.bw.WriteByte('\n') != nil
			}
			continue
		}
		r.buf.Write(line)
		r.buf.WriteByte('\n')
	}
	switch err := sc.Err(); {
	case errors.Is(err, errFlood):
		// One error naming the budget: the trace so far is dropped, so
		// that it is neither judged nor held (exec.go, session).
		r.err, r.flood, r.overBudget = fmt.Errorf("wrote more than %s of trace on stdout (%d bytes), the budget of one spec's trace; %s if the machine has the memory (a trace takes about 9 times its size once read). Its trace is not judged: a cut trace would break rules the driver never broke", mib(r.maxBytes), r.maxBytes, r.hint), true, true
		r.dropped = max(r.lines-1, 0) // the events, without the header
		r.buf = bytes.Buffer{}
		r.lines = 0
	case errors.Is(err, bufio.ErrTooLong):
		r.err, r.flood = fmt.Errorf("a line longer than %d bytes", maxLine), true
	case errors.Is(err, os.ErrDeadlineExceeded):
		// we stopped reading after a kill; the kill says why
	case err != nil:
		r.err = err
	}
}

// mib writes n bytes in MiB (or bytes, below one).
func mib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// trace parses the trace lines read so far (the events before a bad line
// are kept).
func (r *streamReader) trace() (trace.Trace, error) {
	if r.pw != nil {
		r.bw.Flush()
		r.pw.Close()
		lt := <-r.parsed
		r.liveEvents = lt.events
		if r.lines == 0 {
			return trace.Trace{}, nil
		}
		return trace.Trace{Header: lt.header}, lt.err
	}
	if r.lines == 0 {
		return trace.Trace{}, nil
	}
	return trace.Read(bytes.NewReader(r.buf.Bytes()))
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total += int64(len(p))
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total > int64(len(w.buf)) {
		return fmt.Sprintf("[... %d bytes before]\n", w.total-int64(len(w.buf))) + string(w.buf)
	}
	return string(w.buf)
}
