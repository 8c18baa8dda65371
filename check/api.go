package check

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/replayspec/replayspec/trace"
)

// replayOps is the operation enum (API-2); NONE and LAST are not operations
// a query may resolve, so they are left out and not judged.
var replayOps = map[trace.Op]uint64{trace.OpConfig: 1, trace.OpPass: 2}

var (
	configForbidden = []string{trace.MemberCurrentPass, trace.MemberTotalPasses, trace.MemberReplayStartContext, trace.MemberReplayStopContext}
	passForbidden   = []string{trace.MemberReplayPassCount, trace.MemberReplayContinue}
	passRequired    = []string{trace.MemberReplayStartContext, trace.MemberReplayStopContext}
)

// checkAPI judges the API surface: callback names, payload fields, the
// operation queries and the single configuration of the domain.
func checkAPI(x *index) []Violation {
	var vs []Violation
	cbs := x.types[ekCallback]
	x.examinedTimes("API-2", len(cbs)) // every callback's op and phase
	x.examinedTimes("API-3", len(cbs))
	for _, i := range cbs {
		vs = append(vs, x.checkCallbackShape(i)...)
		vs = append(vs, x.checkPayloadSize(i)...)
	}
	vs = append(vs, x.checkDispatchInfo()...)
	vs = append(vs, x.checkReplayIsCallbackTracing()...)
	vs = append(vs, x.checkReplayBesideCounting()...)
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
		if e.Call == trace.CallOperationName || e.Call == trace.CallOperationID {
			if v, bad := x.checkOperationQuery(i); bad {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

// checkCallbackShape judges callback i; checkAPI counts its API-2 and
// API-3 instances.
func (x *index) checkCallbackShape(i int) []Violation {
	e := &x.ev[i]
	var vs []Violation
	op := x.opPhaseAt(i)
	if op == cbOther { // else CONFIG or PASS, ENTER or EXIT: both hold
		switch e.Op {
		case trace.OpConfig, trace.OpPass:
		case "SNAPSHOT", "RESTORE", trace.OpLast, trace.OpNone:
			// API-3: these are not operations of the domain.
			vs = append(vs, x.violation("API-3", e.Dispatch, fmt.Sprintf("a callback for operation %s was delivered", e.Op), i))
		default:
			vs = append(vs, x.violation("API-2", e.Dispatch, fmt.Sprintf("a callback has operation %q, not CONFIG or PASS", e.Op), i))
		}
		if e.Phase != trace.PhaseEnter && e.Phase != trace.PhaseExit {
			vs = append(vs, x.violation("API-2", e.Dispatch, fmt.Sprintf("a callback has phase %q, not ENTER or EXIT", e.Phase), i))
		}
	}
	// The op from the column where it says one (a callback's op is read
	// from the event only when its op or phase is neither of the two).
	isConfig := op == cbConfigEnter || op == cbConfigExit || op == cbOther && e.Op == trace.OpConfig
	isPass := op == cbPassEnter || op == cbPassExit || op == cbOther && e.Op == trace.OpPass
	switch {
	case isConfig:
		x.examinedAt(slotAPI6)
		// API-6: pass fields are zero during CONFIG.
		if p, ok := x.passOf(i); ok && p != 0 {
			vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("CONFIG %s carries current_pass %d", e.Phase, p), i))
		}
		if e.Total != nil && *e.Total != 0 {
			vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("CONFIG %s carries total_passes %d", e.Phase, *e.Total), i))
		}
		if x.payloads {
			if set := intersect(x.callbackOf(i).payload, configForbidden); len(set) > 0 {
				vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("CONFIG %s payload has %s set", e.Phase, strings.Join(set, ", ")), i))
			}
		}
	case isPass:
		if !x.payloads {
			break
		}
		x.examinedAt(slotAPI6)
		x.examinedAt(slotLCX1)
		set, lacks := x.passPayload(x.callbackOf(i).payload)
		if len(set) > 0 {
			vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("PASS %s payload has the tool callback %s set", e.Phase, strings.Join(set, ", ")), i))
		}
		// LCX-1: the local context callbacks come with every PASS.
		for _, f := range lacks {
			vs = append(vs, x.violation("LCX-1", e.Dispatch, fmt.Sprintf("PASS %s payload lacks %s", e.Phase, f), i))
		}
	}
	return vs
}

// passPayload is what a PASS callback's payload has set of passForbidden
// (API-6) and lacks of passRequired (LCX-1), in their order. A loop's
// callbacks mostly share one payload list (the recorder's and the
// decoder's are shared), so the answer for the last list asked about,
// known by where its elements lie and how many there are, is kept: the
// same elements, the same answer.
func (x *index) passPayload(payload []string) (set, lacks []string) {
	m := &x.lastPass
	if m.known && unsafe.SliceData(payload) == m.at && len(payload) == m.n {
		return m.set, m.lacks
	}
	set = intersect(payload, passForbidden)
	for _, f := range passRequired {
		if !slices.Contains(payload, f) {
			lacks = append(lacks, f)
		}
	}
	*m = payloadVerdict{known: true, at: unsafe.SliceData(payload), n: len(payload), set: set, lacks: lacks}
	return set, lacks
}

// payloadVerdict is passPayload's answer for one payload list.
type payloadVerdict struct {
	known      bool
	at         *string
	n          int
	set, lacks []string
}

func intersect(have, names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(have, n) {
			out = append(out, n)
		}
	}
	return out
}

// checkOperationQuery judges one name-by-id or id-by-name query (API-4,
// API-3): CONFIG and PASS are found with their enum values; NONE, LAST and
// the reserved SNAPSHOT and RESTORE are not operations.
func (x *index) checkOperationQuery(i int) (Violation, bool) {
	e := &x.ev[i]
	var asked string
	known := false
	defer func() {
		if asked != "" {
			if known {
				x.examined("API-4")
			} else {
				x.examined("API-3")
			}
		}
	}()
	switch e.Call {
	case trace.CallOperationName:
		if e.OpID == nil || *e.OpID == 0 {
			return Violation{}, false // nothing asked, or NONE: not judged
		}
		asked = fmt.Sprintf("id %d", *e.OpID)
		_, known = opName(*e.OpID)
	case trace.CallOperationID:
		name := trace.Op(strings.TrimPrefix(strings.ToUpper(string(e.OpName)), "ROCPROFILER_KERNEL_REPLAY_"))
		if name == "" || name == trace.OpNone {
			return Violation{}, false
		}
		asked = string(name)
		_, known = replayOps[name]
	}
	want, rule := trace.StatusSuccess, "API-4"
	if !known {
		want, rule = trace.StatusOperationNotFound, "API-3" // LAST and beyond do not exist
	}
	if !e.Status.Is(want) {
		return x.violation(rule, 0, fmt.Sprintf("%s(%s) returned %s, want %s", e.Call, asked, e.Status, want), i), true
	}
	if !known {
		return Violation{}, false
	}
	name := trace.Op(strings.TrimPrefix(strings.ToUpper(string(e.OpName)), "ROCPROFILER_KERNEL_REPLAY_"))
	if id, ok := replayOps[name]; !ok || e.OpID == nil || *e.OpID != id {
		got := "no id"
		if e.OpID != nil {
			got = fmt.Sprintf("id %d", *e.OpID)
		}
		return x.violation("API-4", 0, fmt.Sprintf("%s answered %q with %s, which is not a pair of the operation enum", e.Call, e.OpName, got), i), true
	}
	return Violation{}, false
}

func opName(id uint64) (trace.Op, bool) {
	for n, v := range replayOps {
		if v == id {
			return n, true
		}
	}
	return "", false
}

// API-5 (clarified 2026-11-30): size is the size of the whole payload, so
// it reaches the end of every member of the layout; a size that stops short
// of a member the payload carries makes the member look absent to a tool.
func (x *index) checkPayloadSize(i int) []Violation {
	cb := x.callbackOf(i) // from the columns: the event is read only for a violation
	if cb.size == nil {
		return nil
	}
	x.examinedAt(slotAPI5)
	size := *cb.size
	if size >= trace.PayloadSize {
		return nil // every member ends within the whole payload (TestPayloadMembersEndWithin)
	}
	e := &x.ev[i]
	for _, m := range cb.payload {
		if end, ok := trace.MemberEnd(m); ok && end > size {
			return []Violation{x.violation("API-5", e.Dispatch, fmt.Sprintf("%s %s payload size is %d, yet it carries %s, which ends at offset %d: a tool comparing offsets with size would think it absent", e.Op, e.Phase, size, m, end), i)}
		}
	}
	if size < trace.PayloadSize {
		return []Violation{x.violation("API-5", e.Dispatch, fmt.Sprintf("%s %s payload size is %d; the whole payload is %d bytes (%s ends there)", e.Op, e.Phase, size, trace.PayloadSize, trace.MemberReplayStopContext), i)}
	}
	return nil
}

// API-5: dispatch_info is always filled in by the SDK: in every callback
// of a dispatch it carries its own size and the grid and workgroup the
// application launched.
func (x *index) checkDispatchInfo() []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		a := x.appOf(d)
		for _, list := range [...][]int{d.configEnter, d.configExit, d.passEnter, d.passExit} {
			if x.dispatchInfo(d, a, list, &vs) {
				return // one finding per dispatch is enough to see it
			}
		}
	})
	return vs
}

// dispatchInfo judges the dispatch_info of d's callbacks in list, until
// one is wrong: found says so, its violation added to vs.
func (x *index) dispatchInfo(d *dispatchView, a *appView, list []int, vs *[]Violation) (found bool) {
	for _, i := range list {
		in := x.callbackOf(i).info // from the columns: the event is read only for a violation
		if in == nil {
			continue
		}
		e := &x.ev[i]
		x.examinedAt(slotAPI5)
		switch {
		case in.Size == 0:
			*vs = append(*vs, x.violation("API-5", d.id, fmt.Sprintf("%s %s: dispatch_info has size 0, as if the SDK had not filled it in", e.Op, e.Phase), i))
		case a != nil && x.ev[a.at].Grid != nil && *x.ev[a.at].Grid != in.Grid:
			*vs = append(*vs, x.violation("API-5", d.id, fmt.Sprintf("%s %s: dispatch_info's grid is %v, the application launched %v", e.Op, e.Phase, in.Grid, *x.ev[a.at].Grid), a.at, i))
		case a != nil && x.ev[a.at].Workgroup != nil && *x.ev[a.at].Workgroup != in.Workgroup:
			*vs = append(*vs, x.violation("API-5", d.id, fmt.Sprintf("%s %s: dispatch_info's workgroup is %v, the application launched %v", e.Op, e.Phase, in.Workgroup, *x.ev[a.at].Workgroup), a.at, i))
		default:
			continue
		}
		return true
	}
	return false
}

// API-1: replay is an ordinary callback tracing domain: a dispatch is
// replayed only after KERNEL_REPLAY was configured with the ordinary
// configure call, and the tool never needed a dedicated replay call.
func (x *index) checkReplayIsCallbackTracing() []Violation {
	var vs []Violation
	configured := -1
	for _, i := range x.replayConfigs() {
		if x.ev[i].Status.Is(trace.StatusSuccess) {
			configured = i
			break
		}
	}
	x.eachDispatch(func(d *dispatchView) {
		if len(d.configEnter) == 0 || !x.has(trace.API) {
			return
		}
		x.examined("API-1")
		if configured < 0 || configured > d.configEnter[0] {
			vs = append(vs, x.violation("API-1", d.id, fmt.Sprintf("dispatch %d got KERNEL_REPLAY callbacks, but no configure_callback_tracing of KERNEL_REPLAY had succeeded before", d.id), d.configEnter[0]))
		}
	})
	return vs
}

// API-7: replay is not exclusive with dispatch counter collection: a run
// may configure both, and both configurations succeed.
func (x *index) checkReplayBesideCounting() []Violation {
	replay, counting := -1, -1
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
		switch {
		case e.Call == trace.CallConfigureCallback && e.Domain == trace.DomainKernelReplay && replay < 0:
			replay = i
		case e.Call == trace.CallConfigureCounters && counting < 0:
			counting = i
		}
	}
	if replay < 0 || counting < 0 || !x.ev[replay].Status.Is(trace.StatusSuccess) {
		return nil
	}
	x.examined("API-7")
	if e := &x.ev[counting]; !e.Status.Is(trace.StatusSuccess) {
		return []Violation{x.violation("API-7", 0, fmt.Sprintf("dispatch counter collection could not be configured beside kernel replay: it returned %s", e.Status), replay, counting)}
	}
	return nil
}
