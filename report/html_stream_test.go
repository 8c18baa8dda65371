package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	tracecorpus "github.com/replayspec/replayspec/internal/corpus"
	"github.com/replayspec/replayspec/trace"
)

// The page reads a trace as a stream (issue 23); it must draw what the
// held trace drew before, byte for byte. oldTimelinePanels
// (html_old_test.go) is that drawing, kept for this comparison.

// corpus is every trace the repository holds: the goldens and the
// recorded traces of check/testdata.
func corpus(t *testing.T) map[string]trace.Trace {
	t.Helper()
	files, err := tracecorpus.Files("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]trace.Trace{}
	for _, name := range files {
		b, err := tracecorpus.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Read(bytes.NewReader(b))
		if err != nil {
			continue // a broken trace of check/testdata: what the page draws of it is beside the point
		}
		out[name] = tr
	}
	return out
}

// citings are sets of cited events to draw a trace with: none, a few
// spread out, every 7th, the last, and all of one dispatch's.
func citings(tr trace.Trace) map[string]map[uint64]bool {
	out := map[string]map[uint64]bool{"none": nil}
	n := len(tr.Events)
	if n == 0 {
		return out
	}
	few, seventh, one := map[uint64]bool{}, map[uint64]bool{}, map[uint64]bool{}
	for i, e := range tr.Events {
		if i%(n/5+1) == n/10 {
			few[e.Seq] = true
		}
		if i%7 == 3 {
			seventh[e.Seq] = true
		}
		if e.Dispatch == 2 {
			one[e.Seq] = true
		}
	}
	out["few"], out["every-7th"], out["dispatch-2"] = few, seventh, one
	out["last"] = map[uint64]bool{tr.Events[n-1].Seq: true}
	return out
}

// samePanels fails t when the streamed drawing of tr differs from the
// held one.
func samePanels(t *testing.T, name string, tr trace.Trace, cited map[uint64]bool) {
	t.Helper()
	var want []tlPanel
	wantLeft := 0
	if len(tr.Events) > 0 {
		want, wantLeft = oldTimelinePanels(tr, cited, "s0")
	}
	got, left, held, err := timelinePanels(EventsOf(tr), cited, "s0")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if held != (len(tr.Events) > 0) {
		t.Errorf("%s: held %v for %d events", name, held, len(tr.Events))
	}
	if left != wantLeft {
		t.Errorf("%s: %d dispatches left out, want %d", name, left, wantLeft)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d panels, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: panel %d (%s) differs:\n%s", name, i, want[i].Title, panelDiff(got[i], want[i]))
			return
		}
	}
}

// panelDiff says where two panels first differ.
func panelDiff(got, want tlPanel) string {
	if got.Title != want.Title || !reflect.DeepEqual(got.Notes, want.Notes) || got.Width != want.Width {
		return fmt.Sprintf("got %q %q width %d\nwant %q %q width %d", got.Title, got.Notes, got.Width, want.Title, want.Notes, want.Width)
	}
	for i := range min(len(got.Shapes), len(want.Shapes)) {
		if got.Shapes[i] != want.Shapes[i] {
			return fmt.Sprintf("shape %d: got %+v\nwant %+v", i, got.Shapes[i], want.Shapes[i])
		}
	}
	return fmt.Sprintf("%d shapes, want %d; lanes %v, want %v; cited %v, want %v", len(got.Shapes), len(want.Shapes), got.Lanes, want.Lanes, got.cited, want.cited)
}

// Every trace of the repository, cited in several ways, draws the same.
func TestHTMLStreamedCorpus(t *testing.T) {
	for name, tr := range corpus(t) {
		for how, cited := range citings(tr) {
			samePanels(t, name+" cited "+how, tr, cited)
		}
	}
}

// dispatches is a trace of n dispatches in a row on thread 1, each of
// passes passes, labelled in turn from labels.
func dispatches(n, passes int, labels ...string) trace.Trace {
	t := &built{Trace: trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: "many", Sources: trace.AllSources}}}
	add := t.add
	add(trace.Event{Type: trace.AgentInfo, Agent: 1, Family: trace.FamilyMI300, Label: "gpu0"})
	for d := uint64(1); d <= uint64(n); d++ {
		label := labels[int(d)%len(labels)]
		add(trace.Event{Type: trace.AppDispatch, Thread: 1, Label: label, Signal: d, Kernel: "increment"})
		add(trace.Event{Type: trace.DispatchID, Thread: 1, Agent: 1, Queue: 1, Dispatch: d, Kernel: "increment"})
		c := cb(0, 0, 1, d, trace.OpConfig, trace.PhaseEnter, 0)
		c.Label = label
		add(c)
		add(trace.Event{Type: trace.Snapshot, Thread: 1, Dispatch: d, Bytes: 64})
		for p := range uint64(passes) {
			if p > 0 {
				add(trace.Event{Type: trace.Restore, Thread: 1, Dispatch: d, Pass: trace.U64(p), Bytes: 64})
			}
			c := cb(0, 0, 1, d, trace.OpPass, trace.PhaseEnter, p)
			c.Label = label
			add(c)
			add(trace.Event{Type: trace.Kernel, Thread: 1, Agent: 1, Queue: 1, Dispatch: d, Kernel: "increment", Start: t.seq * 10, End: t.seq*10 + 5})
			c = cb(0, 0, 1, d, trace.OpPass, trace.PhaseExit, p)
			c.Label = label
			add(c)
		}
		c = cb(0, 0, 1, d, trace.OpConfig, trace.PhaseExit, 0)
		c.Label = label
		add(c)
		add(trace.Event{Type: trace.Signal, Thread: 1, Signal: d, Value: trace.I64(0)})
		add(trace.Event{Type: trace.AppComplete, Thread: 1, Label: label, Signal: d})
	}
	return t.Trace
}

// citedEvery cites every kth event of tr from event from.
func citedEvery(tr trace.Trace, from, k int) map[uint64]bool {
	c := map[uint64]bool{}
	for i := from; i < len(tr.Events); i += k {
		c[tr.Events[i].Seq] = true
	}
	return c
}

// The shapes the page folds, draws whole or picks from draw the same:
// loops short and long, a thousand dispatches, cited events in many
// passes (the middle of a folded loop folded again), huge pass numbers.
func TestHTMLStreamedShapes(t *testing.T) {
	long := loop(10000)
	huge := loop(100)
	for i, e := range huge.Events {
		if p, ok := e.PassOf(); ok {
			huge.Events[i].Pass = trace.U64(p<<56 + 1<<40)
		}
	}
	thousand := dispatches(1000, 2, "a", "b", "c")
	// One dispatch on thread 2 open across another's long loop on thread
	// 1: its picture is the loop's events, unfolded, more than maxItems.
	across := loop(300)
	across.Events = append(across.Events[:2:2], append([]trace.Event{
		{Seq: 100001, Type: trace.AppDispatch, Thread: 2, Label: "wide", Signal: 9},
		{Seq: 100002, Type: trace.Callback, Thread: 2, Dispatch: 9, Label: "wide", Op: trace.OpConfig, Phase: trace.PhaseEnter, Pass: trace.U64(0)},
	}, across.Events[2:]...)...)
	across.Events = append(across.Events,
		trace.Event{Seq: 100003, Type: trace.Callback, Thread: 2, Dispatch: 9, Label: "wide", Op: trace.OpConfig, Phase: trace.PhaseExit, Pass: trace.U64(0)},
		trace.Event{Seq: 100004, Type: trace.AppComplete, Thread: 2, Label: "wide"})
	cases := []struct {
		name  string
		tr    trace.Trace
		cited map[uint64]bool
	}{
		{"one pass", loop(1), nil},
		{"foldAbove passes", loop(foldAbove), nil},
		{"foldAbove+1 passes", loop(foldAbove + 1), nil},
		{"long loop", long, nil},
		{"long loop cited", long, map[uint64]bool{kernelOf(long, 5000).Seq: true, kernelOf(long, 3).Seq: true, long.Events[len(long.Events)-1].Seq: true}},
		{"long loop cited in 300 passes", long, citedEvery(long, 100, 131)},
		{"long loop cited restores", long, citedEvery(long, 9, 500)},
		{"huge pass numbers", huge, nil},
		{"huge pass numbers cited", huge, citedEvery(huge, 50, 37)},
		{"1000 dispatches", thousand, nil},
		{"1000 dispatches cited", thousand, citedEvery(thousand, 500, 997)},
		{"1000 dispatches cited in 100", thousand, citedEvery(thousand, 3, 157)},
		{"65 dispatches", dispatches(65, 3, "a"), nil},
		{"64 dispatches", dispatches(64, 3, "a"), nil},
		{"across", across, nil},
		{"across cited", across, citedEvery(across, 700, 50)},
	}
	for _, c := range cases {
		samePanels(t, c.name, c.tr, c.cited)
	}
}

// lawless is a trace that follows no rule: dispatch ids that come back,
// waits on any label, passes in any order, events without their dispatch.
func lawless(rng *rand.Rand, n, ids int) trace.Trace {
	t := trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: "hostile", Sources: trace.AllSources}}
	types := []trace.Type{trace.Callback, trace.Callback, trace.Kernel, trace.Restore, trace.Snapshot, trace.AppDispatch, trace.AppComplete,
		trace.AppTimeout, trace.Signal, trace.Warning, trace.MemRead, trace.API, trace.NeverEnded}
	labels := []string{"", "a", "b"}
	if rng.IntN(3) == 0 {
		t.Events = append(t.Events, trace.Event{Seq: 1, Type: trace.AgentInfo, Agent: 1, Label: "gpu0"})
	}
	for len(t.Events) < n {
		e := trace.Event{Seq: uint64(len(t.Events) + 1), Type: types[rng.IntN(len(types))], Thread: uint64(rng.IntN(3)),
			Label: labels[rng.IntN(len(labels))], Time: uint64(rng.IntN(1000))}
		if rng.IntN(4) > 0 {
			e.Dispatch = uint64(1 + rng.IntN(ids))
		}
		if rng.IntN(2) == 0 {
			e.Agent, e.Queue = uint64(rng.IntN(3)), uint64(rng.IntN(2))
		}
		if e.Type == trace.Callback {
			e.Op = []trace.Op{trace.OpConfig, trace.OpPass, trace.OpPass}[rng.IntN(3)]
			e.Phase = []trace.Phase{trace.PhaseEnter, trace.PhaseExit}[rng.IntN(2)]
		}
		if e.Type == trace.Callback || e.Type == trace.Restore || e.Type == trace.NeverEnded {
			e.Pass = trace.U64(uint64(rng.IntN(70)))
		}
		t.Events = append(t.Events, e)
	}
	return t
}

// Traces that follow no rule draw the same too: the survey that lets
// dispatches go surveys again keeping them all.
func TestHTMLStreamedHostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	runs, most := 30, 1500
	if testing.Short() {
		runs, most = 30, 400
	}
	resurveyed := 0
	for i := range runs {
		n, ids := 1+rng.IntN(most), 1+rng.IntN(200)
		tr := lawless(rng, n, ids)
		if _, err := survey(EventsOf(tr), nil, false); err == errResurvey {
			resurveyed++
		}
		for how, cited := range citings(tr) {
			samePanels(t, fmt.Sprintf("hostile %d (%d events, %d ids) cited %s", i, n, ids, how), tr, cited)
		}
	}
	if resurveyed == 0 || resurveyed == runs {
		t.Errorf("%d of %d hostile traces surveyed again: the test does not reach both surveys", resurveyed, runs)
	}
}

// A dispatch whose events go on after the application's wait returned is
// drawn to its next wait, as before: the survey that let it go starts
// again keeping it.
func TestHTMLStreamedDispatchAfterWait(t *testing.T) {
	tr := dispatches(70, 2, "a")
	late := tr.Events[5] // dispatch 1's CONFIG ENTER
	late.Seq = uint64(len(tr.Events) + 1)
	late.Phase = trace.PhaseExit
	tr.Events = append(tr.Events, late)
	if _, err := survey(EventsOf(tr), nil, false); err != errResurvey {
		t.Fatalf("survey: %v, want errResurvey", err)
	}
	samePanels(t, "late event", tr, map[uint64]bool{late.Seq: true})
}

// The survey holds no record per dispatch of a trace of dispatches in a
// row: what it keeps is the same for 100 dispatches as for 10,000.
func TestHTMLSurveyBounded(t *testing.T) {
	for _, n := range []int{100, 10000} {
		tr := dispatches(n, 1, "a")
		var live int
		peak := 0
		events := EventsOf(tr)
		// Count the spans open at once through the exported reading: a
		// dispatch is open from its first event to its wait.
		open := map[uint64]bool{}
		events(func(e *trace.Event) error {
			if e.Dispatch != 0 {
				open[e.Dispatch] = true
			}
			if e.Type == trace.AppComplete {
				clear(open)
			}
			live = len(open)
			peak = max(peak, live)
			return nil
		})
		sv, err := survey(events, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(sv.spans) != min(n, maxPanels) || sv.left != max(0, n-maxPanels) || peak != 1 {
			t.Errorf("%d dispatches: %d drawn, %d left, %d open at once", n, len(sv.spans), sv.left, peak)
		}
	}
}

// A page drawn from the NDJSON text of a trace, read as a spool is, is
// the page of the held trace.
func TestHTMLAddFromReadsTwiceAlike(t *testing.T) {
	tr := dispatches(80, 60, "a", "b")
	cited := tr.Events[3000]
	r := failing("many", tr, cited)
	held := NewHTMLPage(HTMLOptions{Target: "sim"})
	held.Add(r, &tr)
	var text bytes.Buffer
	if err := trace.Write(&text, tr); err != nil {
		t.Fatal(err)
	}
	readings := 0
	streamed := NewHTMLPage(HTMLOptions{Target: "sim"})
	err := streamed.AddFrom(r, func(each func(*trace.Event) error) error {
		readings++
		return trace.ReadEach(bytes.NewReader(text.Bytes()), func(trace.Header) error { return nil }, each)
	})
	if err != nil {
		t.Fatal(err)
	}
	if page(t, held) != page(t, streamed) {
		t.Error("the page drawn from the trace's text differs from the held trace's")
	}
	if readings < 3 || readings > 4 {
		t.Errorf("%d readings, want 3 or 4", readings)
	}
}

// A trace that cannot be read part-way gives no timeline, says why, and
// the error is returned.
func TestHTMLAddFromError(t *testing.T) {
	tr := loop(3)
	p := NewHTMLPage(HTMLOptions{})
	err := p.AddFrom(failing("torn", tr), func(each func(*trace.Event) error) error {
		for i := range tr.Events[:4] {
			if err := each(&tr.Events[i]); err != nil {
				return err
			}
		}
		return fmt.Errorf("line 5: unexpected end of JSON input")
	})
	if err == nil {
		t.Fatal("no error")
	}
	html := page(t, p)
	if !strings.Contains(html, "its trace could not be read (line 5: unexpected end of JSON input)") || strings.Contains(html, `class="slice`) {
		t.Error("the page should say the trace could not be read, and draw nothing of it")
	}
}
