package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestWriterIsWrite: a trace written event by event is byte for byte the
// trace written whole.
func TestWriterIsWrite(t *testing.T) {
	tr := Trace{Header: Header{Spec: "s", Target: "sim", Sources: AllSources}, Events: []Event{
		{Seq: 1, Type: AppDispatch, Label: "d<&>"}, {Seq: 2, Type: Kernel, Dispatch: 1, MemIn: "ab"},
	}}
	var b bytes.Buffer
	w, err := NewWriter(&b, tr.Header)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr.Events {
		if err := w.Event(&tr.Events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if want := Marshal(tr); !bytes.Equal(b.Bytes(), want) {
		t.Errorf("streamed:\n%s\nwhole:\n%s", b.Bytes(), want)
	}
}

// TestReadRefusesWhatATraceCannotBe: a trace is read only when it is what
// it claims (issue 25: check judged traces with duplicate and reordered
// seq numbers and with events of a source the header leaves out, and
// failed on a byte-order mark and on a kept end line without saying what
// to do). Each case says why.
func TestReadRefusesWhatATraceCannotBe(t *testing.T) {
	head := `{"trace":"` + Version + `","digest":"xxh3-64","sources":["tool","sdk"]}` + "\n"
	ev := func(seq int) string {
		return fmt.Sprintf(`{"seq":%d,"type":"callback","op":"CONFIG","phase":"ENTER","total":0}`+"\n", seq)
	}
	for _, c := range []struct {
		why, in string
		line    int    // 0: read
		want    string // in the error
	}{
		{"in order, from 1", head + ev(1) + ev(2) + ev(3), 0, ""},
		{"a gap: a profile reports what it sees", head + ev(1) + ev(5) + ev(9), 0, ""},
		{"a byte-order mark before the header is an editor's, not the trace's", "\xef\xbb\xbf" + head + ev(1), 0, ""},
		{"a duplicate seq: two events cannot be one", head + ev(1) + ev(2) + ev(2), 4, "seq 2 after seq 2"},
		{"a line out of order", head + ev(1) + ev(3) + ev(2), 4, "seq 2 after seq 3"},
		{"seq counts from 1", head + ev(0), 2, "seq 0 after seq 0"},
		{"the driver protocol's end line", head + ev(1) + `{"end":1}` + "\n", 3, `{"end":1} is the driver protocol's end line, not an event: a trace ends with its last event. Delete this line`},
		{"an event of a source the header leaves out", head + ev(1) + `{"seq":2,"type":"kernel"}` + "\n", 3, `event seq 2 is a kernel event, of source "runtime", which the trace header does not report`},
	} {
		tr, err := Read(strings.NewReader(c.in))
		var pe *ParseError
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%s: %v", c.why, err)
		case c.line == 0 && len(tr.Events) == 0:
			t.Errorf("%s: no events read", c.why)
		case c.line != 0 && (!errors.As(err, &pe) || pe.Line != c.line || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want line %d: ...%s...", c.why, err, c.line, c.want)
		}
	}
}
