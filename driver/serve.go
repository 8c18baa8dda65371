// Package driver is the port's side of the driver protocol
// (docs/driver-protocol.md): the reference driver that serves a target
// behind it, the expected-failure list a port keeps, and the compliance
// matrix it publishes.
package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// SpecError is a spec the driver could not read: a usage error (exit 2).
type SpecError struct{ Err error }

func (e *SpecError) Error() string { return "reading the spec from stdin: " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// Serve speaks the protocol once on in and out: it writes the handshake of
// impl claiming the target's capabilities and every rule family, reads the
// spec (none: a handshake probe, nothing more is written), runs it on tg
// and writes the trace and the end line. The trace is written even when
// the run fails; the error is returned so the caller exits non-zero.
func Serve(ctx context.Context, in io.Reader, out io.Writer, impl Implementation, tg target.Target, opts target.Options) error {
	return ServeAt(ctx, in, out, impl, tg, opts, ProfileFull)
}

// ServeAt is Serve for a port that reports only what the named profile
// holds: the handshake names it, and each trace keeps the events of its
// sources, numbered again from 1, as a port that sees no more would write
// it (docs/driver-protocol.md, "Observability profiles").
func ServeAt(ctx context.Context, in io.Reader, out io.Writer, impl Implementation, tg target.Target, opts target.Options, profile string) error {
	sources, ok := ProfileSources(profile)
	if !ok {
		return fmt.Errorf("unknown profile %q; known: %s, %s, %s", profile, ProfileBlackBox, ProfileRuntime, ProfileFull)
	}
	hs := Handshake{Protocol: Version, Implementation: impl, Capabilities: []string{},
		Profile: profile, Sources: sources}
	if c, ok := tg.(target.Capable); ok {
		hs.Capabilities = append(hs.Capabilities, c.Capabilities()...)
	}
	hs.Capabilities = append(hs.Capabilities, spec.RuleFamilies...)
	if err := writeLine(out, hs); err != nil {
		return err
	}
	// out must not buffer: the runner waits for the handshake before it
	// sends the spec.
	body, err := io.ReadAll(in)
	if err != nil {
		return &SpecError{err}
	}
	if len(body) == 0 {
		return nil // a probe
	}
	s, err := spec.ParseJSON("stdin", body)
	if err != nil {
		return &SpecError{err}
	}
	if st, ok := tg.(target.Streaming); ok && opts.Sink == nil {
		return serveStreaming(ctx, out, tg, st.Header(spec.Defaults(s)), s, opts, sources)
	}
	t, runErr := tg.Run(ctx, spec.Defaults(s), opts)
	t = t.Only(sources)
	if err := trace.Write(out, t); err != nil {
		return err
	}
	if err := writeLine(out, End{End: len(t.Events)}); err != nil {
		return err
	}
	return runErr
}

// serveStreaming writes each event of the profile's sources as the target
// records it, numbered again from 1, and keeps none: a driver's memory
// does not grow with its trace (issue 23), and its runner may judge the
// events as they come.
func serveStreaming(ctx context.Context, out io.Writer, tg target.Target, h trace.Header, s spec.Spec, opts target.Options, sources []trace.Source) error {
	h.Sources = slices.Clone(sources)
	buf := bufio.NewWriterSize(out, 64<<10)
	w, err := trace.NewWriter(buf, h)
	if err != nil {
		return err
	}
	n := 0
	var writeErr error
	opts.Sink = func(ev *trace.Event) {
		if src, ok := ev.Type.Source(); !ok || !slices.Contains(sources, src) || writeErr != nil {
			return
		}
		n++
		e := *ev // renumbered here: the target's event is not ours to change
		e.Seq = uint64(n)
		writeErr = w.Event(&e)
	}
	opts.Discard = true
	_, runErr := tg.Run(ctx, spec.Defaults(s), opts)
	if writeErr != nil {
		return writeErr
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	if err := writeLine(out, End{End: n}); err != nil {
		return err
	}
	return runErr
}

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to stdout: %w", err)
	}
	return nil
}
