package runner_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// streamer records three events, handing each to the sink as it does.
type streamer struct{}

func (streamer) Name() string { return "streamer" }
func (st streamer) Run(_ context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	t := trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: s.Name}}
	for i := range 3 {
		e := trace.Event{Seq: uint64(i + 1), Type: trace.AppDispatch, Label: s.Name}
		t.Events = append(t.Events, e)
		if opts.Sink != nil {
			opts.Sink(&e)
		}
	}
	return t, nil
}

// TestRecordSeesEachRunAsItIsMade: Options.Record's sink gets every event
// of a run while it runs, its finish is called once the target is done, a
// skipped spec asks for none, and Plan.Record names each run of -count.
func TestRecordSeesEachRunAsItIsMade(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]uint64{}
	finished := map[string]int{}
	record := func(s spec.Spec, run int) (func(*trace.Event), func()) {
		key := s.Name + "#" + string(rune('0'+run))
		return func(e *trace.Event) {
				mu.Lock()
				defer mu.Unlock()
				if finished[key] > 0 {
					t.Errorf("%s: event %d after finish", key, e.Seq)
				}
				got[key] = append(got[key], e.Seq)
			}, func() {
				mu.Lock()
				defer mu.Unlock()
				finished[key]++
			}
	}
	specs := []spec.Spec{{Name: "a"}, {Name: "skipped", Requires: []string{"no-such-capability"}}}
	tg := capable{streamer{}}
	out, _ := runner.RunPlan(context.Background(), specs, runner.Options{Target: tg}, runner.Plan{Count: 2, Jobs: 2, Record: record})
	if len(out) != 4 {
		t.Fatalf("%d cases, want 4", len(out))
	}
	for _, key := range []string{"a#1", "a#2"} {
		if !slices.Equal(got[key], []uint64{1, 2, 3}) || finished[key] != 1 {
			t.Errorf("%s: sink saw %v, finished %d times; want [1 2 3], once", key, got[key], finished[key])
		}
	}
	for key := range got {
		if key != "a#1" && key != "a#2" {
			t.Errorf("a sink was asked for %s", key)
		}
	}
	for key := range finished {
		if key != "a#1" && key != "a#2" {
			t.Errorf("a sink was asked for %s (a skipped spec runs nothing)", key)
		}
	}
}

// capable claims no capability, so that a spec requiring one is skipped.
type capable struct{ streamer }

func (capable) Capabilities() []string { return nil }
