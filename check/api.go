package check

import (
	"fmt"
	"slices"
	"strings"

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
	for _, i := range x.byType[trace.Callback] {
		vs = append(vs, x.checkCallbackShape(i)...)
	}
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if e.Call == trace.CallOperationName || e.Call == trace.CallOperationID {
			if v, bad := x.checkOperationQuery(i); bad {
				vs = append(vs, v)
			}
		}
	}
	return append(vs, x.checkConfigureOnce()...)
}

func (x *index) checkCallbackShape(i int) []Violation {
	e := x.ev[i]
	var vs []Violation
	switch e.Op {
	case trace.OpConfig, trace.OpPass:
	case "SNAPSHOT", "RESTORE", "LAST":
		// API-3: these are not operations of the domain.
		vs = append(vs, x.violation("API-3", e.Dispatch, fmt.Sprintf("a callback for operation %s was delivered", e.Op), i))
	default:
		vs = append(vs, x.violation("API-2", e.Dispatch, fmt.Sprintf("a callback has operation %q, not CONFIG or PASS", e.Op), i))
	}
	if e.Phase != trace.PhaseEnter && e.Phase != trace.PhaseExit {
		vs = append(vs, x.violation("API-2", e.Dispatch, fmt.Sprintf("a callback has phase %q, not ENTER or EXIT", e.Phase), i))
	}
	switch e.Op {
	case trace.OpConfig:
		// API-6: pass fields are zero during CONFIG.
		if p, ok := e.PassOf(); ok && p != 0 {
			vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("CONFIG %s carries current_pass %d", e.Phase, p), i))
		}
		if e.Total != nil && *e.Total != 0 {
			vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("CONFIG %s carries total_passes %d", e.Phase, *e.Total), i))
		}
		if x.payloads {
			if set := intersect(e.Payload, configForbidden); len(set) > 0 {
				vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("CONFIG %s payload has %s set", e.Phase, strings.Join(set, ", ")), i))
			}
		}
	case trace.OpPass:
		if !x.payloads {
			break
		}
		if set := intersect(e.Payload, passForbidden); len(set) > 0 {
			vs = append(vs, x.violation("API-6", e.Dispatch, fmt.Sprintf("PASS %s payload has the tool callback %s set", e.Phase, strings.Join(set, ", ")), i))
		}
		// LCX-1: the local context callbacks come with every PASS.
		for _, f := range passRequired {
			if !slices.Contains(e.Payload, f) {
				vs = append(vs, x.violation("LCX-1", e.Dispatch, fmt.Sprintf("PASS %s payload lacks %s", e.Phase, f), i))
			}
		}
	}
	return vs
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
	e := x.ev[i]
	var asked string
	known := false
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

// checkConfigureOnce keeps ACT-5: after one context configured the domain,
// every later configuration of it is refused.
func (x *index) checkConfigureOnce() []Violation {
	var vs []Violation
	first := -1
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if e.Call != trace.CallConfigureCallback || e.Domain != trace.DomainKernelReplay {
			continue
		}
		if first < 0 {
			if e.Status.Is(trace.StatusSuccess) {
				first = i
			}
			continue
		}
		if !e.Status.Is("ERROR_SERVICE_ALREADY_CONFIGURED") {
			vs = append(vs, x.violation("ACT-5", 0, fmt.Sprintf("a second configuration of KERNEL_REPLAY (context %d) returned %s", e.Context, e.Status), first, i))
		}
	}
	return vs
}
