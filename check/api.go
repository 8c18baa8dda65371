package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// API calls the tool records as `api` events (docs/oracles.md).
const (
	callConfigure     = "configure_callback_tracing"
	callOperationName = "operation_name"
	callOperationID   = "operation_id"
	callStartContext  = "start_context"
	callStopContext   = "stop_context"
	domainReplay      = "KERNEL_REPLAY"
)

// replayOps is the operation enum (API-2); NONE and LAST are not operations
// a query may resolve, so they are left out and not judged.
var replayOps = map[string]uint64{opConfig: 1, opPass: 2}

var (
	configForbidden = []string{"current_pass", "total_passes", "replay_start_context", "replay_stop_context"}
	passForbidden   = []string{"replay_pass_count", "replay_continue"}
	passRequired    = []string{"replay_start_context", "replay_stop_context"}
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
		if e.Call == callOperationName || e.Call == callOperationID {
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
	case opConfig, opPass:
	case "SNAPSHOT", "RESTORE", "LAST":
		// API-3: these are not operations of the domain.
		vs = append(vs, x.violation("API-3", e.Dispatch, fmt.Sprintf("a callback for operation %s was delivered", e.Op), i))
	default:
		vs = append(vs, x.violation("API-2", e.Dispatch, fmt.Sprintf("a callback has operation %q, not CONFIG or PASS", e.Op), i))
	}
	if e.Phase != enter && e.Phase != exit {
		vs = append(vs, x.violation("API-2", e.Dispatch, fmt.Sprintf("a callback has phase %q, not ENTER or EXIT", e.Phase), i))
	}
	switch e.Op {
	case opConfig:
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
	case opPass:
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
// API-3). Its message is "NAME=ID" with "?" on the side not found.
func (x *index) checkOperationQuery(i int) (Violation, bool) {
	e := x.ev[i]
	field, _, _ := strings.Cut(strings.TrimSpace(e.Message), " ")
	name, idText, ok := strings.Cut(field, "=")
	if !ok {
		return Violation{}, false
	}
	name = strings.TrimPrefix(strings.ToUpper(name), "ROCPROFILER_KERNEL_REPLAY_")
	id, idErr := strconv.ParseUint(idText, 10, 64)
	known, wantStatus := false, ""
	switch e.Call {
	case callOperationName:
		if idErr != nil || id == 0 {
			return Violation{}, false // nothing asked, or NONE: not judged
		}
		_, known = opName(id)
	case callOperationID:
		if name == "?" || name == "NONE" {
			return Violation{}, false
		}
		_, known = replayOps[name]
	}
	if known {
		wantStatus = statusSuccess
	} else {
		wantStatus = "ERROR_OPERATION_NOT_FOUND"
	}
	rule := "API-4"
	if !known {
		rule = "API-3" // LAST and beyond (SNAPSHOT, RESTORE) do not exist
	}
	if !statusIs(e.Status, wantStatus) {
		return x.violation(rule, 0, fmt.Sprintf("%s(%s) returned %s, want %s", e.Call, field, e.Status, wantStatus), i), true
	}
	if known && statusIs(e.Status, statusSuccess) {
		if want, okID := replayOps[name]; !okID || idErr != nil || want != id {
			return x.violation("API-4", 0, fmt.Sprintf("%s answered %s, which is not a pair of the operation enum", e.Call, field), i), true
		}
	}
	return Violation{}, false
}

func opName(id uint64) (string, bool) {
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
		if e.Call != callConfigure || !strings.Contains(e.Message, domainReplay) {
			continue
		}
		if first < 0 {
			if statusIs(e.Status, statusSuccess) {
				first = i
			}
			continue
		}
		if !statusIs(e.Status, "ERROR_SERVICE_ALREADY_CONFIGURED") {
			vs = append(vs, x.violation("ACT-5", 0, fmt.Sprintf("a second configuration of KERNEL_REPLAY (context %d) returned %s", e.Context, e.Status), first, i))
		}
	}
	return vs
}
