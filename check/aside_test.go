package check

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/trace"
)

// TestStreamAsideAsInline: a stream that judges its segments on a goroutine
// of their own (JudgeAside, as replayspec check does) concludes exactly
// what one judging them inline does, segments and loop cuts included,
// over every golden and recorded trace cut at every chance and a
// never-ending loop cut every few passes.
func TestStreamAsideAsInline(t *testing.T) {
	var files []string
	for _, glob := range []string{"../golden/*.ndjson", "../golden/*/*.ndjson", "testdata/*.ndjson", "testdata/*.ndjson.gz"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if testing.Short() { // a spread; every trace in make test-heavy
		for i := range files {
			if i%3 == 0 {
				files[i/3] = files[i]
			}
		}
		files = files[:(len(files)+2)/3]
	}
	files = append(files, "testdata/loop-forever-alone.ndjson.gz")
	judge := func(tr trace.Trace, aside bool, every int) (Judgement, bool, *Stream) {
		s := NewStream(tr.Header)
		s.SegmentsOfAtLeast(0)
		s.CutLoopsEvery(every)
		if aside {
			s.JudgeAside()
		}
		for i := range tr.Events {
			s.AddEvent(&tr.Events[i])
		}
		j, ok := s.Finish()
		return j, ok, s
	}
	judgedAside, cuts := 0, 0
	for _, f := range files {
		tr := readAny(t, f)
		for _, every := range []int{0, 3} {
			want, wantOK, in := judge(tr, false, every)
			got, gotOK, out := judge(tr, true, every)
			if in.judgedAside != 0 {
				t.Fatalf("%s: an inline stream judged %d segments aside", f, in.judgedAside)
			}
			judgedAside += out.judgedAside
			cuts += out.LoopCuts()
			if wantOK != gotOK || in.Segments() != out.Segments() || in.LoopCuts() != out.LoopCuts() {
				t.Errorf("%s (loops cut every %d): inline: separable %v, %d segments, %d loop cuts; aside: %v, %d, %d", f, every, wantOK, in.Segments(), in.LoopCuts(), gotOK, out.Segments(), out.LoopCuts())
				continue
			}
			if d := judgementDiff(want, got); d != "" {
				t.Errorf("%s (loops cut every %d): judged aside, the judgement differs from inline (-inline +aside):\n%s", f, every, d)
			}
		}
	}
	least := 30
	if testing.Short() {
		least = 10
	}
	if judgedAside < least || cuts == 0 {
		t.Fatalf("%d segments judged aside, %d loop cuts: the traces no longer exercise the judging goroutine", judgedAside, cuts)
	}
	t.Logf("%d traces, %d segments judged aside, %d loop cuts", len(files), judgedAside, cuts)
}

// TestSegmentHoldsWhatIsPushed: the open segment, held unpacked and then
// packed past plainEvents, gives back the prologue and the events pushed,
// in order, and keeps a loop's head and last pass as a plain slice would.
// sameEvents: got holds want's events, in order. Each event's sequence,
// type, op, label and pass are compared, and whole events by reflection
// at both ends and every 61st (reflect.DeepEqual of every event took
// seconds under -race): a packing that loses, reorders or garbles events
// shows in both.
func sameEvents(want, got []trace.Event) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if w.Seq != g.Seq || w.Type != g.Type || w.Op != g.Op || w.Label != g.Label || (w.Pass == nil) != (g.Pass == nil) || w.Pass != nil && *w.Pass != *g.Pass {
			return false
		}
		if (i < 64 || len(want)-i <= 64 || i%61 == 0) && !reflect.DeepEqual(*w, *g) {
			return false
		}
	}
	return true
}

func TestSegmentHoldsWhatIsPushed(t *testing.T) {
	ev := func(seq int) trace.Event {
		return trace.Event{Seq: uint64(seq), Type: trace.Callback, Op: trace.OpPass, Label: "l", Pass: trace.U64(uint64(seq % 7))}
	}
	sizes := []int{0, 5, plainEvents, plainEvents + 1, 2*plainEvents + 3}
	if testing.Short() {
		sizes = []int{0, 5, plainEvents + 1} // across the packed limit; the rest in make test-heavy
	}
	for _, n := range sizes {
		var g segment
		var want []trace.Event
		for round := range 3 {
			prologue := []trace.Event{ev(-1 - round)}
			want = append([]trace.Event(nil), prologue...)
			g.begin(prologue)
			for i := range n + round {
				e := ev(i)
				g.Push(&e)
				want = append(want, e)
			}
			if g.Len() != len(want)-1 {
				t.Fatalf("%d events, round %d: Len %d, want %d", n, round, g.Len(), len(want)-1)
			}
			if got := g.all(); !sameEvents(want, got) {
				t.Fatalf("%d events, round %d: all (-pushed +held):\n%s", n, round, cmp.Diff(want, got))
			}
			if n < 4 {
				continue
			}
			head, from := 2, n-1
			want = append(want[:1+head:1+head], want[1+from:]...)
			g.keep(head, from)
			e := ev(1000)
			g.Push(&e)
			want = append(want, e)
			if got := g.all(); !sameEvents(want, got) || g.Len() != len(want)-1 {
				t.Fatalf("%d events, round %d: after keep(%d, %d), Len %d (-want +held):\n%s", n, round, head, from, g.Len(), cmp.Diff(want, got))
			}
		}
	}
}
