package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/trace"
)

// Then steps for identity, correlation, user data, local contexts,
// services, agents and the API surface.

// services as scenarios name them, and as traces do.
var serviceNames = map[string]string{
	"kernel trace": "kernel_trace",
	"counter":      "counter_collection",
	"PC sample":    "pc_sampling",
	"SPM":          "spm",
	"thread trace": "thread_trace",
	"device count": "device_counting",
}

const svcPhrase = `(kernel trace|counter|PC sample|SPM|thread trace|device count)`

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

func registerMore(sc *godog.ScenarioContext) {
	// DID
	sc.Step(`^one dispatch id is reserved for every dispatch the application makes$`, oneIDEach)
	sc.Step(`^everything the dispatch causes carries its one dispatch id(?: of "([\w-]+)")?$`, sameIDEverywhere)
	sc.Step(`^each pass has its own kernel start and end times$`, ownTimestamps)
	sc.Step(`^the `+svcPhrase+` records of "([\w-]+)" name passes `+nums+`$`, recordsNamePasses)
	sc.Step(`^the `+svcPhrase+` records of the passes share the dispatch id and differ in their pass index$`, recordsSameIDDifferentPass)

	// COR
	sc.Step(`^every replay callback of the dispatch carries the same internal and ancestor correlation ids$`, sameCorrelation)
	sc.Step(`^every pass delivers a `+svcPhrase+` record with those correlation ids and its own timestamps$`, recordPerPassSameCorr)
	sc.Step(`^the `+svcPhrase+` records of passes `+nums+` carry external ids `+nums+`$`, externalIDs)

	// UD
	sc.Step(`^the pass count, every pass and every continue call of the dispatch see user data (\d+)$`, seeUserData)
	sc.Step(`^the replay callbacks of "([\w-]+)" never see user data (\d+)$`, neverSeeUserData)
	sc.Step(`^every pass begins with user data (\d+) again$`, passBeginsWith)
	sc.Step(`^each pass's EXIT and the continue after it see what that pass wrote$`, exitSeesOwnWrite)

	// CB-4
	sc.Step(`^every replay callback, pass count and continue call runs on the thread that submitted the dispatch$`, sameThread)
	sc.Step(`^each `+svcPhrase+` record of the dispatch arrives inside its pass, on that thread, tagged with that pass$`, recordsInsidePass)
	sc.Step(`^the `+svcPhrase+` record of "([\w-]+)" carries no pass index$`, recordNoPass)

	// LCX, SVC
	sc.Step(`^every PASS callback offers the local start and stop functions$`, passOffersLocal)
	sc.Step(`^the local (start|stop) of `+name+` (?:from|in) (CONFIG ENTER|CONFIG EXIT|PASS ENTER|PASS EXIT)(?: of pass (\d+))? returns ([A-Z_]+)$`, localStatus)
	sc.Step(`^`+name+` delivers `+svcPhrase+` records for passes `+nums+`(?: only)?(?: of "([\w-]+)")?$`, deliversInPasses)
	sc.Step(`^`+name+` delivers no `+svcPhrase+` records? (?:in any pass|for "([\w-]+)")$`, deliversNone)
	sc.Step(`^`+name+` delivers a `+svcPhrase+` record for "([\w-]+)"$`, deliversOne)
	sc.Step(`^no global start or stop of a context happens inside the loop$`, noGlobalToggle)
	sc.Step(`^the tool created (\d+) contexts? and no more$`, createdContexts)
	sc.Step(`^no pass delivers both `+svcPhrase+` and `+svcPhrase+` records$`, noSharedPass)

	// AGT
	sc.Step(`^"([\w-]+)" runs (\d+) pass(?:es)?, each collecting counters no other pass collects$`, groupsDisjoint)
	sc.Step(`^together the passes of "([\w-]+)" collect ([A-Z_, and]+)$`, groupsCover)

	sc.Step(`^the trace is altered so that the last pass repeats the first pass's counter group$`, wrapGroups)

	// API, ACT
	sc.Step(`^the tool switched replay on with the ordinary callback tracing configuration, which succeeded$`, ordinaryConfig)
	sc.Step(`^the (counter collection|kernel trace) configuration succeeded too$`, otherConfigOK)
	sc.Step(`^asking by id and by name gives CONFIG=1 and PASS=2$`, opQueries)
	sc.Step(`^asking for (?:the operations? )?((?:[A-Z]+)(?:(?:, | and )[A-Z]+)*) by name finds nothing$`, opNamesMissing)
	sc.Step(`^asking for operation ids (\d+) and above finds nothing$`, opIDsMissing)
	sc.Step(`^CONFIG and PASS each deliver an ENTER and an EXIT$`, enterAndExit)
	sc.Step(`^every replay callback's payload has its size and the dispatch's info filled in$`, payloadFilled)
	sc.Step(`^no CONFIG payload carries a pass field$`, configPayloadClean)
	sc.Step(`^no PASS payload carries the tool's pass count or continue callbacks$`, passPayloadClean)
	sc.Step(`^the second configuration of kernel replay is refused with ([A-Z_]+)$`, secondConfigRefused)
	sc.Step(`^the application never reads back a result of "([\w-]+)"$`, noResult)
}

func u(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// --- DID ----------------------------------------------------------------

func oneIDEach(ctx context.Context) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	res, apps := byType(evs, trace.DispatchID), byType(evs, trace.AppDispatch)
	seen := map[uint64]bool{}
	for _, e := range res {
		if seen[e.Dispatch] {
			return w.failf("dispatch id %d was reserved twice:\n%s", e.Dispatch, show(res...))
		}
		seen[e.Dispatch] = true
	}
	if len(res) != len(apps) {
		return w.failf("the application made %d dispatches; %d dispatch ids were reserved:\n%s", len(apps), len(res), show(res...))
	}
	return nil
}

// window: the events on the dispatch's thread from its app_dispatch to the
// thread's next one.
func (v *dispatchView) window() []trace.Event {
	var out []trace.Event
	open := false
	for _, e := range v.all {
		if e.Thread != v.thread {
			continue
		}
		if e.Type == trace.AppDispatch {
			open = e.Label == v.label
			continue
		}
		if open {
			out = append(out, e)
		}
	}
	return out
}

func sameIDEverywhere(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if v.id == 0 {
		return w.failf("no dispatch id was reserved for %s", v.label)
	}
	n := 0
	for _, e := range v.window() {
		switch e.Type {
		case trace.Callback, trace.PassCount, trace.Continue, trace.Kernel, trace.Record, trace.Snapshot, trace.Restore, trace.DispatchID:
			n++
			if e.Dispatch != v.id {
				return w.failf("everything %s causes should carry dispatch id %d:\n%s", v.label, v.id, show(e))
			}
		}
	}
	if n < 2 {
		return w.failf("%s left too little in the trace to judge", v.label)
	}
	return nil
}

func ownTimestamps(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	type span struct{ s, e uint64 }
	check := func(evs []trace.Event, what string) error {
		seen := map[span]bool{}
		for _, e := range evs {
			sp := span{e.Start, e.End}
			if sp.s == 0 && sp.e == 0 {
				return w.failf("%s carries no timestamps:\n%s", what, show(e))
			}
			if seen[sp] {
				return w.failf("two passes share the %s times %d..%d:\n%s", what, sp.s, sp.e, show(evs...))
			}
			seen[sp] = true
		}
		return nil
	}
	if len(v.of(trace.Kernel)) < 2 {
		return w.failf("the dispatch should run several passes:\n%s", show(v.of(trace.Kernel)...))
	}
	if err := check(v.of(trace.Kernel), "kernel"); err != nil {
		return err
	}
	return check(v.records("kernel_trace"), "kernel trace record")
}

func recordsNamePasses(ctx context.Context, svc, label, which string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	want, err := numbers(which)
	if err != nil {
		return err
	}
	rs := v.records(serviceNames[svc])
	var got []uint64
	for _, r := range rs {
		p, ok := r.PassOf()
		if !ok {
			return w.failf("every %s record of %s should name its pass:\n%s", svc, v.label, show(r))
		}
		got = append(got, p)
	}
	if !equalPasses(got, want) {
		return w.failf("the %s records of %s should name passes %s; they name %s:\n%s", svc, v.label, list(want), list(got), show(rs...))
	}
	return nil
}

func recordsSameIDDifferentPass(ctx context.Context, svc string) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	rs := v.records(serviceNames[svc])
	if len(rs) < 2 {
		return w.failf("several passes should deliver %s records:\n%s", svc, show(rs...))
	}
	seen := map[uint64]bool{}
	for _, r := range rs {
		p, ok := r.PassOf()
		if r.Dispatch != v.id || !ok || seen[p] {
			return w.failf("every %s record should carry dispatch id %d and a pass index of its own:\n%s", svc, v.id, show(rs...))
		}
		seen[p] = true
	}
	return nil
}

// --- COR ----------------------------------------------------------------

func sameCorrelation(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	cbs := v.of(trace.Callback)
	if len(cbs) == 0 || cbs[0].Corr == nil || cbs[0].Corr.Internal == 0 {
		return w.failf("the replay callbacks should carry a correlation id:\n%s", show(cbs...))
	}
	ref := cbs[0].Corr
	for _, e := range cbs {
		if e.Corr == nil || e.Corr.Internal != ref.Internal || e.Corr.Ancestor != ref.Ancestor {
			return w.failf("every replay callback should carry correlation %d/%d:\n%s", ref.Internal, ref.Ancestor, show(cbs[0], e))
		}
	}
	return nil
}

func recordPerPassSameCorr(ctx context.Context, svc string) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	cb, ok := first(v.of(trace.Callback))
	if !ok || cb.Corr == nil {
		return w.failf("the dispatch got no replay callback")
	}
	rs := v.records(serviceNames[svc])
	if len(rs) != len(v.callbacks("PASS", "ENTER")) {
		return w.failf("every pass should deliver one %s record:\n%s", svc, show(rs...))
	}
	starts := map[uint64]bool{}
	for _, r := range rs {
		if r.Corr == nil || r.Corr.Internal != cb.Corr.Internal || r.Corr.Ancestor != cb.Corr.Ancestor || r.Dispatch != v.id {
			return w.failf("every %s record should carry the callbacks' correlation %d/%d and dispatch %d:\n%s", svc, cb.Corr.Internal, cb.Corr.Ancestor, v.id, show(cb, r))
		}
		if starts[r.Start] {
			return w.failf("two %s records share a start time:\n%s", svc, show(rs...))
		}
		starts[r.Start] = true
	}
	return nil
}

func externalIDs(ctx context.Context, svc, which, ids string) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	ps, err := numbers(which)
	if err != nil {
		return err
	}
	want, err := numbers(ids)
	if err != nil {
		return err
	}
	got := map[uint64]uint64{}
	for _, r := range v.records(serviceNames[svc]) {
		if p, ok := r.PassOf(); ok && r.Corr != nil {
			got[p] = r.Corr.External
		}
	}
	for i, p := range ps {
		if g, ok := got[p]; !ok || g != want[i] {
			return w.failf("the %s record of pass %d should carry external id %d:\n%s", svc, p, want[i], show(v.records(serviceNames[svc])...))
		}
	}
	return nil
}

// --- UD -----------------------------------------------------------------

func seeUserData(ctx context.Context, want uint64) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	evs := append(append(v.of(trace.PassCount), v.callbacks("PASS", "")...), v.of(trace.Continue)...)
	if len(v.of(trace.PassCount)) == 0 || len(v.callbacks("PASS", "")) == 0 {
		return w.failf("the dispatch should be replayed:\n%s", show(v.ev...))
	}
	for _, e := range evs {
		if u(e.UserData) != want {
			return w.failf("every callback of the sequence should see user data %d:\n%s", want, show(e))
		}
	}
	return nil
}

func neverSeeUserData(ctx context.Context, label string, bad uint64) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if len(v.of(trace.Callback)) == 0 {
		return w.failf("%s should get replay callbacks", label)
	}
	for _, e := range append(v.of(trace.Callback), v.of(trace.PassCount)...) {
		if u(e.UserData) == bad {
			return w.failf("%s's sequence should not see another sequence's user data %d:\n%s", label, bad, show(e))
		}
	}
	return nil
}

func passBeginsWith(ctx context.Context, want uint64) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range v.callbacks("PASS", "ENTER") {
		if u(e.UserData) != want {
			return w.failf("pass %d should begin with user data %d:\n%s", u(e.Pass), want, show(e))
		}
	}
	return nil
}

func exitSeesOwnWrite(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range append(v.callbacks("PASS", "EXIT"), v.of(trace.Continue)...) {
		if u(e.UserData) != 1000+u(e.Pass) {
			return w.failf("after pass %d the tool should see what that pass wrote, %d:\n%s", u(e.Pass), 1000+u(e.Pass), show(e))
		}
	}
	return nil
}

// --- CB-4 ---------------------------------------------------------------

func sameThread(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range append(append(v.of(trace.Callback), v.of(trace.PassCount)...), v.of(trace.Continue)...) {
		if e.Thread != v.thread {
			return w.failf("replay callbacks of %s should run on thread %d, the submitter:\n%s", v.label, v.thread, show(e))
		}
	}
	return nil
}

func recordsInsidePass(ctx context.Context, svc string) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	rs := v.records(serviceNames[svc])
	if len(rs) == 0 {
		return w.failf("the dispatch delivered no %s record", svc)
	}
	for _, r := range rs {
		var open *trace.Event
		for i, e := range v.callbacks("PASS", "") {
			if e.Seq > r.Seq {
				break
			}
			if e.Phase == "ENTER" {
				open = &v.callbacks("PASS", "")[i]
			} else {
				open = nil
			}
		}
		if open == nil || r.Thread != v.thread || u(r.Pass) != u(open.Pass) || r.Pass == nil {
			return w.failf("a %s record should arrive inside its pass on thread %d, tagged with that pass:\n%s", svc, v.thread, show(r))
		}
	}
	return nil
}

func recordNoPass(ctx context.Context, svc, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	rs := v.records(serviceNames[svc])
	if len(rs) == 0 {
		return w.failf("%s should deliver a %s record", label, svc)
	}
	for _, r := range rs {
		if r.Pass != nil {
			return w.failf("%s is not replayed, yet its %s record carries a stale pass index:\n%s", label, svc, show(r))
		}
	}
	return nil
}

// --- LCX, SVC -------------------------------------------------------------

func passOffersLocal(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	ps := v.callbacks("PASS", "")
	if len(ps) == 0 {
		return w.failf("no pass ran")
	}
	for _, e := range ps {
		if !slices.Contains(e.Payload, "replay_start_context") || !slices.Contains(e.Payload, "replay_stop_context") {
			return w.failf("every PASS payload should carry the local start and stop functions:\n%s", show(e))
		}
	}
	return nil
}

func localStatus(ctx context.Context, call, ctxName, where, pass, status string) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	op, phase, _ := strings.Cut(where, " ")
	var matched []trace.Event
	for _, e := range byType(evs, trace.Local) {
		if e.Call != call || e.Label != ctxName || e.Op != op || e.Phase != phase {
			continue
		}
		if pass != "" && fmt.Sprint(u(e.Pass)) != pass {
			continue
		}
		matched = append(matched, e)
	}
	if len(matched) == 0 {
		return w.failf("the tool made no local %s of %s in %s:\n%s", call, ctxName, where, show(byType(evs, trace.Local)...))
	}
	for _, e := range matched {
		if strings.TrimPrefix(e.Status, "ROCPROFILER_STATUS_") != status {
			return w.failf("the local %s of %s in %s should return %s:\n%s", call, ctxName, where, status, show(e))
		}
	}
	return nil
}

func deliversInPasses(ctx context.Context, ctxName, svc, which, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	id, err := w.ctxID(ctxName)
	if err != nil {
		return err
	}
	want, err := numbers(which)
	if err != nil {
		return err
	}
	var got []uint64
	var rs []trace.Event
	for _, r := range v.records(serviceNames[svc]) {
		if r.Context == id {
			got = append(got, u(r.Pass))
			rs = append(rs, r)
		}
	}
	if !equalPasses(got, want) {
		return w.failf("%s should deliver %s records for passes %s of %s only; it did for %s:\n%s", ctxName, svc, list(want), v.label, list(got), show(rs...))
	}
	return nil
}

func (w *world) ctxRecords(ctx context.Context, ctxName, svc, label string) ([]trace.Event, error) {
	v, err := w.view(ctx, label)
	if err != nil {
		return nil, err
	}
	id, err := w.ctxID(ctxName)
	if err != nil {
		return nil, err
	}
	var rs []trace.Event
	for _, r := range v.records(serviceNames[svc]) {
		if r.Context == id {
			rs = append(rs, r)
		}
	}
	return rs, nil
}

func deliversNone(ctx context.Context, ctxName, svc, label string) error {
	w := get(ctx)
	rs, err := w.ctxRecords(ctx, ctxName, svc, label)
	if err != nil {
		return err
	}
	if len(rs) > 0 {
		return w.failf("%s should deliver no %s record here:\n%s", ctxName, svc, show(rs...))
	}
	return nil
}

func deliversOne(ctx context.Context, ctxName, svc, label string) error {
	w := get(ctx)
	rs, err := w.ctxRecords(ctx, ctxName, svc, label)
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return w.failf("%s should deliver one %s record for %s; it delivered %d:\n%s", ctxName, svc, label, len(rs), show(rs...))
	}
	return nil
}

func noGlobalToggle(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	in, ok1 := first(v.callbacks("CONFIG", "ENTER"))
	out, ok2 := first(v.callbacks("CONFIG", "EXIT"))
	if !ok1 || !ok2 {
		return w.failf("the dispatch should be a replay candidate")
	}
	for _, e := range byType(v.all, trace.API) {
		if (e.Call == "start_context" || e.Call == "stop_context") && e.Seq > in.Seq && e.Seq < out.Seq {
			return w.failf("no global start or stop may happen inside the loop:\n%s", show(in, e, out))
		}
	}
	return nil
}

func createdContexts(ctx context.Context, n int) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	var cs []trace.Event
	for _, e := range byType(evs, trace.API) {
		if e.Call == "create_context" {
			cs = append(cs, e)
		}
	}
	if len(cs) != n {
		return w.failf("the tool should have created %d contexts, the trace shows %d:\n%s", n, len(cs), show(cs...))
	}
	return nil
}

func noSharedPass(ctx context.Context, a, b string) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	has := map[uint64]map[string]bool{}
	for _, r := range v.of(trace.Record) {
		p := u(r.Pass)
		if has[p] == nil {
			has[p] = map[string]bool{}
		}
		has[p][r.Service] = true
	}
	for p, s := range has {
		if s[serviceNames[a]] && s[serviceNames[b]] {
			return w.failf("pass %d delivered both %s and %s records:\n%s", p, a, b, show(v.of(trace.Record)...))
		}
	}
	return nil
}

// --- AGT ------------------------------------------------------------------

func groupsDisjoint(ctx context.Context, label string, n int) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if err := nPassesRun(ctx, label, uint64(n)); err != nil {
		return err
	}
	seen := map[string]uint64{}
	perPass := map[uint64]int{}
	for _, r := range v.records("counter_collection") {
		p := u(r.Pass)
		for _, c := range r.Counters {
			if q, dup := seen[c.Name]; dup && q != p {
				return w.failf("%s: counter %s was collected in pass %d and again in pass %d (the groups wrapped):\n%s", label, c.Name, q, p, show(v.records("counter_collection")...))
			}
			seen[c.Name] = p
			perPass[p]++
		}
	}
	for p := 0; p < n; p++ {
		if perPass[uint64(p)] == 0 {
			return w.failf("%s: pass %d collected no counter (a group was skipped):\n%s", label, p, show(v.records("counter_collection")...))
		}
	}
	return nil
}

func groupsCover(ctx context.Context, label, names string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
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

// --- API, ACT ---------------------------------------------------------------

func apiCalls(evs []trace.Event, call string) []trace.Event {
	var out []trace.Event
	for _, e := range byType(evs, trace.API) {
		if e.Call == call {
			out = append(out, e)
		}
	}
	return out
}

func ordinaryConfig(ctx context.Context) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	var ok bool
	for _, e := range apiCalls(evs, "configure_callback_tracing") {
		ok = ok || (strings.Contains(e.Message, "KERNEL_REPLAY") && e.Status == "SUCCESS")
	}
	if !ok {
		return w.failf("replay should be switched on by configuring callback tracing for KERNEL_REPLAY:\n%s", show(byType(evs, trace.API)...))
	}
	for _, e := range byType(evs, trace.API) {
		if strings.Contains(strings.ToLower(e.Call), "replay") {
			return w.failf("there is no dedicated kernel replay call, yet the tool made one:\n%s", show(e))
		}
	}
	return nil
}

func otherConfigOK(ctx context.Context, what string) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	call := "configure_" + strings.ReplaceAll(what, " ", "_")
	cs := apiCalls(evs, call)
	if len(cs) == 0 || cs[0].Status != "SUCCESS" {
		return w.failf("%s should be configured alongside replay:\n%s", what, show(byType(evs, trace.API)...))
	}
	return nil
}

// opQuery reads an operation query: "NAME=ID", with "?" on the side the
// SDK did not find (docs/oracles.md).
func opQuery(e trace.Event) (name, id string) {
	name, id, _ = strings.Cut(strings.TrimSpace(e.Message), "=")
	return strings.TrimPrefix(name, "ROCPROFILER_KERNEL_REPLAY_"), id
}

func opQueries(ctx context.Context) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	want := map[string]string{"CONFIG": "1", "PASS": "2"}
	found := map[string]int{}
	for _, call := range []string{"operation_name", "operation_id"} {
		for _, e := range apiCalls(evs, call) {
			name, id := opQuery(e)
			if wantID, ok := want[name]; ok {
				if id != wantID || e.Status != "SUCCESS" {
					return w.failf("%s should be operation %s:\n%s", name, wantID, show(e))
				}
				found[call+name]++
			}
		}
	}
	if len(found) != 4 {
		return w.failf("the tool should have asked both ways for CONFIG and PASS:\n%s", show(byType(evs, trace.API)...))
	}
	return nil
}

func opNamesMissing(ctx context.Context, names string) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	for _, n := range words(names) {
		found := false
		for _, e := range apiCalls(evs, "operation_id") {
			if name, _ := opQuery(e); name == n {
				found = true
				if e.Status != "ERROR_OPERATION_NOT_FOUND" {
					return w.failf("%s should not be an operation:\n%s", n, show(e))
				}
			}
		}
		if !found {
			return w.failf("the tool never asked for %s:\n%s", n, show(apiCalls(evs, "operation_id")...))
		}
	}
	return nil
}

func opIDsMissing(ctx context.Context, from int64) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	asked := false
	for _, e := range apiCalls(evs, "operation_name") {
		_, idText := opQuery(e)
		var id int64
		if _, err := fmt.Sscan(idText, &id); err != nil || id < from {
			continue
		}
		asked = true
		if e.Status != "ERROR_OPERATION_NOT_FOUND" {
			return w.failf("operation id %d should not exist:\n%s", id, show(e))
		}
	}
	if !asked {
		return w.failf("the tool never asked for operation id %d or above", from)
	}
	return nil
}

func enterAndExit(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	for _, op := range []string{"CONFIG", "PASS"} {
		if len(v.callbacks(op, "ENTER")) == 0 || len(v.callbacks(op, "ENTER")) != len(v.callbacks(op, "EXIT")) {
			return w.failf("%s should deliver an ENTER and an EXIT each time:\n%s", op, show(v.of(trace.Callback)...))
		}
	}
	for _, e := range v.of(trace.Callback) {
		if e.Op != "CONFIG" && e.Op != "PASS" {
			return w.failf("the domain has only CONFIG and PASS callbacks:\n%s", show(e))
		}
	}
	return nil
}

func payloadFilled(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range v.of(trace.Callback) {
		if !slices.Contains(e.Payload, "size") || !slices.Contains(e.Payload, "dispatch_info") {
			return w.failf("every payload should arrive with its size and dispatch info:\n%s", show(e))
		}
	}
	return nil
}

func configPayloadClean(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range v.callbacks("CONFIG", "") {
		for _, f := range []string{"current_pass", "total_passes", "replay_start_context", "replay_stop_context"} {
			if slices.Contains(e.Payload, f) {
				return w.failf("a CONFIG payload should carry no %s:\n%s", f, show(e))
			}
		}
	}
	return nil
}

func passPayloadClean(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	ps := v.callbacks("PASS", "")
	if len(ps) == 0 {
		return w.failf("no pass ran")
	}
	for _, e := range ps {
		for _, f := range []string{"replay_pass_count", "replay_continue"} {
			if slices.Contains(e.Payload, f) {
				return w.failf("a PASS payload should carry no %s:\n%s", f, show(e))
			}
		}
	}
	return nil
}

func secondConfigRefused(ctx context.Context, status string) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	var cs []trace.Event
	for _, e := range apiCalls(evs, "configure_callback_tracing") {
		if strings.Contains(e.Message, "KERNEL_REPLAY") {
			cs = append(cs, e)
		}
	}
	if len(cs) != 2 || cs[0].Status != "SUCCESS" || strings.TrimPrefix(cs[1].Status, "ROCPROFILER_STATUS_") != status {
		return w.failf("the first configuration should succeed and the second return %s:\n%s", status, show(cs...))
	}
	return nil
}

func noResult(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if c := append(v.appOf(trace.AppComplete), v.appOf(trace.AppReadback)...); len(c) > 0 {
		return w.failf("the application should never read back a result of %s:\n%s", label, show(c...))
	}
	return nil
}

// wrapGroups is a hand-made fault: the counter record of the last pass is
// rewritten to repeat pass 0's group, as a tool that wraps would deliver
// it; the rule checks then judge the altered trace.
func wrapGroups(ctx context.Context) error {
	w := get(ctx)
	r, err := w.result(ctx)
	if err != nil {
		return err
	}
	evs := slices.Clone(r.Trace.Events)
	var firstRec, lastRec = -1, -1
	for i, e := range evs {
		if e.Type == trace.Record && e.Service == "counter_collection" && e.Pass != nil {
			if firstRec < 0 {
				firstRec = i
			}
			lastRec = i
		}
	}
	if firstRec < 0 || firstRec == lastRec {
		return w.failf("the run should deliver counter records from several passes")
	}
	evs[lastRec].Counters = slices.Clone(evs[firstRec].Counters)
	r.Trace.Events = evs
	r.Violations = check.Trace(r.Trace)
	return nil
}
