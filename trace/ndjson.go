package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
			if err := DecodeStrict(b, &t.Header); err != nil {
				return t, &ParseError{line, fmt.Errorf("header: %w (the first line must be {\"trace\":%q,...})", err, Version)}
			}
			if t.Header.Trace != Version {
				return t, &ParseError{line, fmt.Errorf("trace version %q is not supported; this reader speaks %q", t.Header.Trace, Version)}
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
