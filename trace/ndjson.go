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
	tw, err := NewWriter(bw, t.Header)
	if err != nil {
		return err
	}
	for i := range t.Events {
		if err := tw.Event(&t.Events[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// A Writer writes a trace as it is made, in Write's canonical form: each
// line in one call of the underlying writer, so that a file written through
// it without a buffer holds whole lines up to the moment its writer died.
type Writer struct {
	w    io.Writer
	line []byte // the event line being written, reused
}

// NewWriter writes the header line (version Version when h names none).
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if h.Trace == "" {
		h.Trace = Version
	}
	if h.Trace == Version && h.Digest == "" {
		h.Digest = DigestXXH3 // what Digest makes
	}
	return &Writer{w: w}, enc.Encode(h)
}

// Event writes one event line: what json.Encoder writes for e, by hand
// (appendEvent).
func (w *Writer) Event(e *Event) error {
	w.line = append(appendEvent(w.line[:0], e), '\n')
	_, err := w.w.Write(w.line)
	if cap(w.line) > 64<<10 { // one long line (a warning's message) is not kept
		w.line = nil
	}
	return err
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
// a port's output is reported rather than ignored. The trace must be what
// it claims: the seq of each event is above the seq of the line before, so
// that a duplicate, a reordering or a splice is refused rather than judged;
// a gap is allowed, since a port may report only what its profile sees;
// and no event comes from a source its header leaves out. A UTF-8
// byte-order mark before the header is skipped; the driver protocol's end
// line, kept by mistake, is refused with what to do.
func Read(r io.Reader) (Trace, error) {
	var t Trace
	var events eventChunks // no copying to grow: a large trace is read about once
	err := ReadEach(r, func(h Header) error {
		t.Header = h
		return nil
	}, func(e *Event) error {
		events.push(e)
		return nil
	})
	t.Events = events.flatten(true) // on an error, the events before the bad line are what was read
	return t, err
}

// ReadEach reads an NDJSON trace as Read does, holding none of it: header
// is called with the header line, then each is called with every event in
// turn (the event is reused after each returns). An error either returns
// ends the read and is returned.
func ReadEach(r io.Reader, header func(Header) error, each func(*Event) error) error {
	var h Header
	var ev Event // each line is decoded here
	var dec eventDecoder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	var last uint64 // the seq of the event before
	sawHeader := false
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !sawHeader {
			b = bytes.TrimPrefix(b, utf8BOM) // an editor's mark, not content
			if err := readHeader(b, &h); err != nil {
				return &ParseError{line, err}
			}
			sawHeader = true
			if err := header(h); err != nil {
				return err
			}
			continue
		}
		var err error
		e := &ev // dec.decode clears it: decoding into a used event would reuse its slices
		switch err = dec.decode(b, e); {
		case err != nil:
		case e.Type == "" && isEndLine(b):
			err = endLineError(b)
		case e.Type == "":
			err = errNoType
		case e.Seq <= last:
			err = seqError(e.Seq, last)
		default:
			err = typeError(e, &h)
		}
		if err != nil {
			return &ParseError{line, explainValue(b, err)}
		}
		last = e.Seq
		if err := each(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return scanError(err, line)
	}
	if !sawHeader {
		return emptyTrace()
	}
	return nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// isEndLine reports whether b is the driver protocol's end line {"end":N}.
func isEndLine(b []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || len(m) != 1 {
		return false
	}
	_, ok := m["end"]
	return ok
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
	if h.Trace != Version && h.Trace != v2 {
		return fmt.Errorf("trace version %q is not supported; this reader speaks %q and %q", h.Trace, Version, v2)
	}
	if err := checkDigest(h.Trace, h.Digest); err != nil {
		return err
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
