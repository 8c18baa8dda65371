package spec

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem in a spec, with where it is and what would be
// accepted there. It renders as
//
//	file:line:col: path: message (allowed: a, b)
//
// Line and Col are 0 when the spec did not come from text (Validate on a
// built Spec); Path is empty for problems of the file as a whole.
type Error struct {
	File      string
	Line, Col int
	// Path is the key path, e.g. application.dispatches[2].kernel.
	Path string
	Msg  string
	// Allowed lists what the format accepts at Path, when that is a list.
	Allowed []string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		if e.File == "" {
			b.WriteString("<input>")
		}
		b.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	if len(e.Allowed) > 0 {
		b.WriteString(" (allowed: " + strings.Join(e.Allowed, ", ") + ")")
	}
	return b.String()
}

// Errors is every problem found in one spec, sorted by position.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find the individual *Error values.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func (es Errors) sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.Msg, b.Msg))
	})
}

// err returns nil, the single *Error, or all of them as Errors.
func (es Errors) err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	es.sort()
	return es
}

// allowedError is an error that knows what would have been accepted; the
// decoder turns it into an *Error at the node's position.
type allowedError struct {
	msg     string
	allowed []string
}

func (e *allowedError) Error() string {
	if len(e.allowed) == 0 {
		return e.msg
	}
	return e.msg + " (allowed: " + strings.Join(e.allowed, ", ") + ")"
}
