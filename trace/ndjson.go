package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// maxLine bounds one NDJSON line so that a flood without newlines cannot
// exhaust memory.
const maxLine = 4 << 20

// Write serializes t canonically: the header, then one event per line, keys
// in the order of the struct fields, no spaces.
func Write(w io.Writer, t Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := t.Header
	if h.Trace == "" {
		h.Trace = Version
	}
	if err := enc.Encode(h); err != nil {
		return err
	}
	for i := range t.Events {
		if err := enc.Encode(&t.Events[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Marshal is Write into a byte slice.
func Marshal(t Trace) []byte {
	var b bytes.Buffer
	_ = Write(&b, t) // writing to a bytes.Buffer cannot fail
	return b.Bytes()
}

// ParseError says which line of an NDJSON trace is wrong and why.
type ParseError struct {
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }

// Read parses an NDJSON trace. The header line is required and must name a
// version this package reads; unknown fields are errors, so that a typo in
// a port's output is reported rather than ignored.
func Read(r io.Reader) (Trace, error) {
	var t Trace
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	sawHeader := false
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !sawHeader {
			if err := readHeader(b, &t.Header); err != nil {
				return t, &ParseError{line, err}
			}
			sawHeader = true
			continue
		}
		var e Event
		if err := DecodeStrict(b, &e); err != nil {
			return t, &ParseError{line, err}
		}
		if e.Type == "" {
			return t, &ParseError{line, fmt.Errorf("event has no \"type\"")}
		}
		if _, known := e.Type.Source(); !known {
			return t, &ParseError{line, fmt.Errorf("unknown event type %q (docs/trace.md lists the types of %s)", e.Type, Version)}
		}
		t.Events = append(t.Events, e)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return t, &ParseError{line + 1, fmt.Errorf("line longer than %d bytes", maxLine)}
		}
		return t, err
	}
	if !sawHeader {
		return t, &ParseError{1, fmt.Errorf("empty trace: expected a header line {\"trace\":%q}", Version)}
	}
	return t, nil
}

// v1 is the first schema; its traces are refused with what to do.
const v1 = "replayspec.trace/v1"

// readHeader decodes and checks the header line: the version this package
// speaks, and the sources the trace reports.
func readHeader(b []byte, h *Header) error {
	var probe struct {
		Trace string `json:"trace"`
	}
	if err := json.Unmarshal(b, &probe); err == nil && probe.Trace == v1 {
		return fmt.Errorf("this is a %s trace; this reader speaks %s only. Record it again with this version of replayspec (or update the port's writer: docs/trace.md, \"Changes from v1\")", v1, Version)
	}
	if err := DecodeStrict(b, h); err != nil {
		return fmt.Errorf("header: %w (the first line must be {\"trace\":%q,\"sources\":[...],...})", err, Version)
	}
	if h.Trace != Version {
		return fmt.Errorf("trace version %q is not supported; this reader speaks %q", h.Trace, Version)
	}
	if h.Sources == nil {
		return fmt.Errorf("header: no \"sources\": say which of tool, app, runtime, sdk the trace reports (docs/trace.md)")
	}
	for _, src := range h.Sources {
		if !slices.Contains(AllSources, src) {
			return fmt.Errorf("header: unknown source %q: want tool, app, runtime or sdk", src)
		}
	}
	return nil
}

// DecodeStrict reads one JSON line strictly: unknown fields and trailing
// values are errors, so that a port's typo is reported rather than ignored.
func DecodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value on the line")
	}
	return nil
}
