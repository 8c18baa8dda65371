package check

import (
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// apiCall is an api_call event as the tool's API tracing records it.
func apiCall(thread uint64, call trace.Call, phase trace.Phase, id, ancestor uint64) trace.Event {
	return trace.Event{Type: trace.APICall, Thread: thread, Call: call, Phase: phase, Corr: &trace.Corr{Internal: id, Ancestor: ancestor}}
}

// launchedPart is one dispatch of the builder cut where its launch call's
// events go: up to its app_dispatch (head), what the SDK does inside the
// submission (body), and from its completion signal on (tail).
type launchedPart struct{ head, body, tail []trace.Event }

func cut(es []trace.Event) launchedPart {
	var p launchedPart
	i := 0
	for ; i < len(es); i++ {
		p.head = append(p.head, es[i])
		if es[i].Type == trace.AppDispatch {
			i++
			break
		}
	}
	for ; i < len(es) && es[i].Type != trace.Signal; i++ {
		p.body = append(p.body, es[i])
	}
	p.tail = es[i:]
	return p
}

// twoLaunches: threads 1 and 2 each launch a replayed dispatch (1 on agent
// 1, 2 on agent 2); thread 2's launch call opens while thread 1's is open,
// before thread 1's submission (the interleaving the simulator makes). The
// builder gives dispatch d the ids 100+d / 7; the launches are calls 7 and
// 8, the submissions 101 and 102. ancestor2 is the ancestor dispatch 2's
// callbacks and records carry (8 when right).
func twoLaunches(ancestor2 uint64) trace.Trace {
	b1 := new(builder)
	b1.dispatch(loop{label: "a", dispatch: 1, count: 3})
	b2 := &builder{clock: 20000}
	b2.dispatch(loop{label: "b", dispatch: 2, thread: 2, agent: 2, count: 3})
	one, two := cut(b1.ev), cut(b2.ev)
	for i := range two.body {
		if c := two.body[i].Corr; c != nil {
			two.body[i].Corr = &trace.Corr{Internal: c.Internal, External: c.External, Ancestor: ancestor2}
		}
	}
	t := new(builder).prelude().trace()
	add := func(es ...trace.Event) { t.Events = append(t.Events, es...) }
	add(one.head...)
	add(apiCall(1, trace.CallLaunchKernel, trace.PhaseEnter, 7, 0))
	add(two.head...)
	add(apiCall(2, trace.CallLaunchKernel, trace.PhaseEnter, 8, 0))
	add(apiCall(1, trace.CallQueueSubmit, trace.PhaseEnter, 101, 7))
	add(one.body...)
	add(apiCall(1, trace.CallQueueSubmit, trace.PhaseExit, 101, 7), apiCall(1, trace.CallLaunchKernel, trace.PhaseExit, 7, 0))
	add(one.tail...)
	add(apiCall(2, trace.CallQueueSubmit, trace.PhaseEnter, 102, 8))
	add(two.body...)
	add(apiCall(2, trace.CallQueueSubmit, trace.PhaseExit, 102, 8), apiCall(2, trace.CallLaunchKernel, trace.PhaseExit, 8, 0))
	add(two.tail...)
	return renumber(t)
}

// blackBox is t as a port at the black-box profile reports it.
func blackBox(t trace.Trace) trace.Trace {
	t = drop(t, func(e trace.Event) bool {
		s, _ := e.Type.Source()
		return s == trace.SourceSDK || s == trace.SourceRuntime
	})
	t.Header.Sources = []trace.Source{trace.SourceTool, trace.SourceApp}
	return renumber(t)
}

func TestCorrelationAgainstAPICalls(t *testing.T) {
	good := twoLaunches(8)
	valid := map[string]trace.Trace{
		"each dispatch takes its own thread's calls": good,
		"at black-box": blackBox(good),
		"an exit of no open call changes nothing": renumber(insertAfter(good, typ(trace.AppDispatch), apiCall(1, trace.CallLaunchKernel, trace.PhaseExit, 55, 0))),
	}
	for name, tr := range valid {
		t.Run("valid/"+name, func(t *testing.T) {
			res := Judge(tr)
			for _, v := range res.Violations {
				t.Errorf("unexpected violation:\n%s", v)
			}
			for _, id := range []string{"COR-1", "COR-2"} {
				if r, _ := res.Rule(id); r.Verdict != Pass {
					t.Errorf("%s: %s, want pass", id, r.Verdict)
				}
			}
		})
	}

	outer := edit(good, and(dispatchIs(1), func(e trace.Event) bool { return e.Corr != nil && e.Type != trace.APICall }), func(e *trace.Event) {
		e.Corr = &trace.Corr{Internal: 7, External: e.Corr.External}
	})
	recordsOnly := edit(good, and(dispatchIs(2), typ(trace.Record)), func(e *trace.Event) {
		e.Corr = &trace.Corr{Internal: 102, External: e.Corr.External, Ancestor: 7}
	})
	cases := []struct {
		reason string
		tr     trace.Trace
		want   []string
	}{
		// The ids agree with each other across the whole window, so only
		// the API calls show what is wrong.
		{"the ancestor is thread 1's launch, opened last but on another thread", twoLaunches(7), []string{"COR-1", "COR-2"}},
		{"the same at black-box", blackBox(twoLaunches(7)), []string{"COR-1", "COR-2"}},
		{"the ancestor is 0, as if nothing were open around the submission", twoLaunches(0), []string{"COR-1", "COR-2"}},
		{"the ids are the launch's, not the innermost call's", outer, []string{"COR-1", "COR-2"}},
		{"the records alone carry another thread's launch", recordsOnly, []string{"COR-2"}},
	}
	for _, c := range cases {
		t.Run("broken/"+c.reason, func(t *testing.T) {
			got := map[string]Violation{}
			for _, v := range Judge(c.tr).Violations {
				got[v.Rule] = v
			}
			for _, r := range c.want {
				v, ok := got[r]
				if !ok {
					t.Errorf("want a %s violation, got %v", r, got)
					continue
				}
				if !strings.Contains(v.Message, "innermost API call open on thread") || len(v.Events) < 3 {
					t.Errorf("the violation does not show the calls it was judged against:\n%s", v)
				}
			}
		})
	}
}

// Without api_call events nothing changes: the ids are judged against each
// other only, and a consistent wrong ancestor goes unseen (what the API
// calls are for).
func TestCorrelationWithoutAPICalls(t *testing.T) {
	tr := drop(twoLaunches(7), typ(trace.APICall))
	for _, v := range Judge(renumber(tr)).Violations {
		t.Errorf("unexpected violation:\n%s", v)
	}
}
