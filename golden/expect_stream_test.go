package golden

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// A spec's expectations judged as a stream, segment by segment, conclude
// what JudgeSpec concludes over the whole trace: every library trace,
// whole and at the black-box and runtime profiles (where some keys are not
// observable and the stream cuts elsewhere), cut at every chance. The
// broken traces are internal/faults' (TestStreamJudgesAsWhole).
func TestStreamJudgesExpectationsAsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("under -short, internal/faults' TestStreamJudgesAsWhole judges the library's expectations at every profile; all of it in make test-heavy")
	}
	profiles := map[string][]trace.Source{"full": nil}
	for _, name := range []string{"black-box", "runtime"} {
		profiles[name], _ = driver.ProfileSources(name)
	}
	var expecting, streamed, cut int
	for _, s := range library(t) {
		whole, err := trace.Read(bytes.NewReader(sharedTraceOf(t, s)))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		s = spec.Defaults(s)
		if !check.HasExpectations(s) {
			continue
		}
		for name, sources := range profiles {
			tr := whole
			if sources != nil {
				tr = whole.Only(sources)
			}
			expecting++
			j, exp, unseen, segments, ok := check.JudgeStreamSpec(s, tr, 0)
			if !ok {
				continue
			}
			streamed++
			if segments > 1 {
				cut++
			}
			wj, wexp, wunseen := check.JudgeSpec(s, tr)
			if d := cmp.Diff(wexp, exp); d != "" {
				t.Errorf("%s at %s: its expectations judged as a stream of %d segments differ from the whole trace's (-whole +stream):\n%s", s.Name, name, segments, d)
			}
			if d := cmp.Diff(wunseen, unseen); d != "" {
				t.Errorf("%s at %s: the keys not observable differ (-whole +stream):\n%s", s.Name, name, d)
			}
			if d := cmp.Diff(wj, j); d != "" {
				t.Errorf("%s at %s: the oracles' judgement differs (-whole +stream):\n%s", s.Name, name, d)
			}
		}
	}
	t.Logf("%d traces of specs with expectations: %d judged as a stream, %d of them in more than one segment", expecting, streamed, cut)
	if cut == 0 {
		t.Error("no trace with expectations was judged in more than one segment: the comparison compared nothing")
	}
}

// portBugs are edits of a correct trace the way a port gets a trace wrong
// (docs/oracles.md): each makes some expectation fail, or fail otherwise,
// and the stream must still conclude what the whole trace does.
var portBugs = map[string]func(ev []trace.Event) []trace.Event{
	// Every SDK call the tool made returned an error.
	"calls fail": func(ev []trace.Event) []trace.Event {
		for i := range ev {
			if ev[i].Type == trace.API {
				ev[i].Status = trace.StatusError
			}
		}
		return ev
	},
	// The application read each buffer twice at the end, first a stale
	// copy (one element off): the last read is what the buffer holds.
	"stale read first": func(ev []trace.Event) []trace.Event {
		var out []trace.Event
		for _, e := range ev {
			if e.Type == trace.AppMemory && len(e.Runs) > 0 {
				stale := e
				stale.Runs = slices.Clone(e.Runs)
				stale.Runs[0].Value++
				out = append(out, stale)
			}
			out = append(out, e)
		}
		return out
	},
	// Every callback carries the label of the first dispatch.
	"callbacks labelled as the first dispatch": func(ev []trace.Event) []trace.Event {
		first := ""
		for i := range ev {
			switch ev[i].Type {
			case trace.AppDispatch:
				if first == "" {
					first = ev[i].Label
				}
			case trace.Callback:
				ev[i].Label = first
			}
		}
		return ev
	},
	// The last application dispatch's events lost their label.
	"last dispatch unlabelled": func(ev []trace.Event) []trace.Event {
		last := ""
		for i := range ev {
			if ev[i].Type == trace.AppDispatch {
				last = ev[i].Label
			}
		}
		for i := range ev {
			if ev[i].Label == last && ev[i].Type != trace.API && ev[i].Type != trace.Local {
				ev[i].Label = ""
			}
		}
		return ev
	},
}

// TestStreamJudgesBrokenExpectationsAsWhole: the library's traces with
// expectations, each broken by every port bug, judged as a stream cut at
// every chance, conclude what JudgeSpec concludes of the whole broken
// trace.
func TestStreamJudgesBrokenExpectationsAsWhole(t *testing.T) {
	compared := map[string]int{}
	across, err := spec.Load("testdata/expectations-across-segments.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(library(t), across) {
		s = spec.Defaults(s)
		if !check.HasExpectations(s) {
			continue
		}
		if testing.Short() {
			// A trace the stream judges in one segment compares nothing;
			// a bug seldom cuts one that was not cut.
			tr, err := trace.Read(bytes.NewReader(sharedTraceOf(t, s)))
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if _, segments, _ := check.JudgeStream(tr); segments < 2 {
				continue
			}
		}
		for _, bug := range slices.Sorted(maps.Keys(portBugs)) {
			tr, err := trace.Read(bytes.NewReader(sharedTraceOf(t, s)))
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			tr.Events = portBugs[bug](tr.Events)
			for i := range tr.Events {
				tr.Events[i].Seq = uint64(i + 1)
			}
			_, exp, _, segments, ok := check.JudgeStreamSpec(s, tr, 0)
			if !ok || segments < 2 {
				continue
			}
			_, wexp, _ := check.JudgeSpec(s, tr)
			if d := cmp.Diff(wexp, exp); d != "" {
				t.Errorf("%s with %q: its expectations judged as a stream of %d segments differ from the whole trace's (-whole +stream):\n%s", s.Name, bug, segments, d)
			}
			compared[bug]++
		}
	}
	t.Logf("traces judged in more than one segment, per bug: %v", compared)
	for bug := range portBugs {
		if compared[bug] == 0 {
			t.Errorf("%q: no trace was judged in more than one segment: the comparison compared nothing", bug)
		}
	}
}
