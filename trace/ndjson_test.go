package trace

import (
	"bytes"
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
