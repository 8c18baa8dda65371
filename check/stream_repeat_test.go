package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/trace"
)

// TestStreamKeepsRepetitionsAsRanges: a stream of a repeated dispatch's
// trace (labels NAME#K, spec.RepetitionLabel) keeps the labels it has
// judged as ranges of K per name, not a hash a label, and still knows
// each one: a later event naming a judged repetition is caught.
func TestStreamKeepsRepetitionsAsRanges(t *testing.T) {
	tr := readAny(t, "../golden/repeated-dispatch.ndjson")
	s := NewStream(tr.Header)
	for i := range tr.Events {
		s.Add(tr.Events[i])
	}
	if s.Segments() < 2 {
		t.Fatalf("%d segments: the trace was not cut, nothing was closed", s.Segments())
	}
	if len(s.closedLabels) != 0 {
		t.Errorf("%d labels kept by hash; a repetition's belongs in a range", len(s.closedLabels))
	}
	r := s.closedReps["step"]
	if r == nil || len(*r) != 1 || (*r)[0].lo != 0 {
		t.Fatalf("step's closed repetitions %v, want one range from 0", r)
	}
	hi := (*r)[0].hi
	for _, c := range []struct {
		label string
		want  bool
	}{{"step#0", true}, {trace.Event{Label: "step#" + itoa(hi)}.Label, true}, {"step#" + itoa(hi+1), false}, {"step#00", false}, {"step", false}, {"other#0", false}} {
		if got := s.closedLabel(c.label); got != c.want {
			t.Errorf("closedLabel(%q) = %v, want %v", c.label, got, c.want)
		}
	}
	j, ok := s.Finish()
	if !ok {
		t.Fatal("not judged as a stream")
	}
	if d := cmp.Diff(Judge(tr), j); d != "" {
		t.Errorf("the streamed judgement differs from the whole trace's (-whole +stream):\n%s", d)
	}
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
