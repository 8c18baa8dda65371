package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/trace"
)

// The Then steps of the tool's contexts: local starts and stops (LCX), the
// services each context delivers (SVC), and counter groups across passes
// (AGT).

func registerContexts(sc *godog.ScenarioContext) {
	// LCX, SVC
	step(sc, `^every PASS callback offers the local start and stop functions$`, passOffersLocal)
	step(sc, `^the local (start|stop) of `+name+` (?:from|in) (CONFIG ENTER|CONFIG EXIT|PASS ENTER|PASS EXIT)(?: of pass (\d+))? returns ([A-Z_]+)$`, localStatus)
	step(sc, `^`+name+` delivers `+svcPhrase+` records for passes `+nums+`(?: only)?(?: of "([\w-]+)")?$`, deliversInPasses)
	step(sc, `^`+name+` delivers no `+svcPhrase+` records? (?:in any pass|for "([\w-]+)")$`, deliversNone)
	step(sc, `^`+name+` delivers a `+svcPhrase+` record for "([\w-]+)"$`, deliversOne)
	step(sc, `^no global start or stop of a context happens inside the loop$`, noGlobalToggle)
	step(sc, `^the tool created (\d+) contexts? and no more$`, createdContexts)
	step(sc, `^no pass delivers both `+svcPhrase+` and `+svcPhrase+` records$`, noSharedPass)

	// AGT
	step(sc, `^"([\w-]+)" runs (\d+) pass(?:es)?, each collecting counters no other pass collects$`, groupsDisjoint)
	step(sc, `^together the passes of "([\w-]+)" collect ([A-Z_, and]+)$`, groupsCover)
}

// ctxID is the id the tool's n-th context gets: contexts are created in
// the order the scenario names them, from 1 (docs/spec-format.md).
func (w *world) ctxID(name string) (uint64, error) {
	for i, c := range w.s.Contexts {
		if c.Name == name {
			return uint64(i + 1), nil
		}
	}
	return 0, fmt.Errorf("the tool has no context %q", name)
}

// --- LCX, SVC -------------------------------------------------------------

func passOffersLocal(ctx context.Context) error {
	w, ps, err := passCallbacksOf(ctx)
	if err != nil {
		return err
	}
	return w.expectEvery(ps, func(e trace.Event) bool { return carriesAll(e.Payload, "replay_start_context", "replay_stop_context") },
		"every PASS payload should carry the local start and stop functions")
}

func localStatus(ctx context.Context, call, ctxName, in, pass, want string) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	op, phase, _ := strings.Cut(in, " ")
	locals := byType(evs, trace.Local)
	matched := where(locals, func(e trace.Event) bool {
		return e.Call == trace.Call(call) && e.Label == ctxName && e.Op == trace.Op(op) && e.Phase == trace.Phase(phase) &&
			(pass == "" || fmt.Sprint(u(e.Pass)) == pass)
	})
	if len(matched) == 0 {
		return w.failf("the tool made no local %s of %s in %s:\n%s", call, ctxName, in, show(locals...))
	}
	for _, e := range matched {
		if !e.Status.Is(trace.Status(want)) {
			return w.failf("the local %s of %s in %s should return %s:\n%s", call, ctxName, in, want, show(e))
		}
	}
	return nil
}

// contextRecords are the records of a service (as scenarios name it) that
// one context delivered for the dispatch.
func (w *world) contextRecords(v *dispatchView, ctxName, svc string) ([]trace.Event, error) {
	id, err := w.ctxID(ctxName)
	if err != nil {
		return nil, err
	}
	return where(v.records(serviceName(svc)), func(r trace.Event) bool { return r.Context == id }), nil
}

// recordsOf is where a step about what one context delivered for a
// dispatch begins.
func recordsOf(ctx context.Context, ctxName, svc, label string) (*world, []trace.Event, error) {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return nil, nil, err
	}
	rs, err := w.contextRecords(v, ctxName, svc)
	return w, rs, err
}

func deliversInPasses(ctx context.Context, ctxName, svc, which, label string) error {
	w, v, want, err := passesOf(ctx, label, which)
	if err != nil {
		return err
	}
	rs, err := w.contextRecords(v, ctxName, svc)
	if err != nil {
		return err
	}
	if got := passes(rs); !equalPasses(got, want) {
		return w.failf("%s should deliver %s records for passes %s of %s only; it did for %s:\n%s", ctxName, svc, list(want), v.label, list(got), show(rs...))
	}
	return nil
}

func deliversNone(ctx context.Context, ctxName, svc, label string) error {
	w, rs, err := recordsOf(ctx, ctxName, svc, label)
	if err != nil {
		return err
	}
	return w.expectNone(rs, "%s should deliver no %s record here", ctxName, svc)
}

func deliversOne(ctx context.Context, ctxName, svc, label string) error {
	w, rs, err := recordsOf(ctx, ctxName, svc, label)
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return w.failf("%s should deliver one %s record for %s; it delivered %d:\n%s", ctxName, svc, label, len(rs), show(rs...))
	}
	return nil
}

func noGlobalToggle(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	in, ok1 := first(v.callbacks(trace.OpConfig, trace.PhaseEnter))
	out, ok2 := first(v.callbacks(trace.OpConfig, trace.PhaseExit))
	if !ok1 || !ok2 {
		return w.failf("the dispatch should be a replay candidate")
	}
	for _, e := range byType(v.all, trace.API) {
		if (e.Call == trace.CallStartContext || e.Call == trace.CallStopContext) && e.Seq > in.Seq && e.Seq < out.Seq {
			return w.failf("no global start or stop may happen inside the loop:\n%s", show(in, e, out))
		}
	}
	return nil
}

func createdContexts(ctx context.Context, n int) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	if cs := apiCalls(evs, "create_context"); len(cs) != n {
		return w.failf("the tool should have created %d contexts, the trace shows %d:\n%s", n, len(cs), show(cs...))
	}
	return nil
}

func noSharedPass(ctx context.Context, a, b string) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	has := map[uint64]map[trace.Service]bool{}
	for _, r := range v.of(trace.Record) {
		p := u(r.Pass)
		if has[p] == nil {
			has[p] = map[trace.Service]bool{}
		}
		has[p][r.Service] = true
	}
	for p, s := range has {
		if s[serviceName(a)] && s[serviceName(b)] {
			return w.failf("pass %d delivered both %s and %s records:\n%s", p, a, b, show(v.of(trace.Record)...))
		}
	}
	return nil
}

// --- AGT ------------------------------------------------------------------

func groupsDisjoint(ctx context.Context, label string, n int) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if err := nPassesRun(ctx, label, uint64(n)); err != nil {
		return err
	}
	rs := v.records("counter_collection")
	seen := map[string]uint64{}
	perPass := map[uint64]int{}
	for _, r := range rs {
		p := u(r.Pass)
		for _, c := range r.Counters {
			if q, dup := seen[c.Name]; dup && q != p {
				return w.failf("%s: counter %s was collected in pass %d and again in pass %d (the groups wrapped):\n%s", label, c.Name, q, p, show(rs...))
			}
			seen[c.Name] = p
			perPass[p]++
		}
	}
	for p := 0; p < n; p++ {
		if perPass[uint64(p)] == 0 {
			return w.failf("%s: pass %d collected no counter (a group was skipped):\n%s", label, p, show(rs...))
		}
	}
	return nil
}

func groupsCover(ctx context.Context, label, names string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	var got []string
	for _, r := range v.records("counter_collection") {
		for _, c := range r.Counters {
			got = append(got, c.Name)
		}
	}
	want := words(names)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return w.failf("the passes of %s should collect %v together; they collected %v", label, want, got)
	}
	return nil
}
