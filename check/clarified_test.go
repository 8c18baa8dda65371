package check

import (
	"slices"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// The rule clarifications of 2026-11-30, as the LCX oracle reads them:
// SVC-1 with LCX-3 (a local start ends a trace service's stop) and LCX-7
// (a local stop of a context inactive before the loop is refused too).
func TestClarifiedLocalRules(t *testing.T) {
	// Context 10 traces kernels; context 12 is never started.
	stopStart := func(pass2Record bool) trace.Trace {
		tr := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3,
			locals: map[int][]trace.Event{1: {ctxStop(10)}, 2: {ctxStart(10)}}}).trace()
		drop1 := func(e trace.Event) bool {
			p, _ := e.PassOf()
			return e.Type == trace.Record && (p == 1 || (p == 2 && !pass2Record))
		}
		return renumber(drop(tr, drop1))
	}
	inactive := func(call, status string) trace.Trace {
		return renumber(insertAfter(new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3}).trace(),
			passCB(trace.PhaseEnter, 1),
			trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.Call(call), Context: 12,
				Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Status: trace.Status(status)}))
	}
	cases := []struct {
		name   string
		tr     trace.Trace
		want   string // the rule that must be reported; "" for none of LCX/SVC
		reason string
	}{
		{"trace back after start", stopStart(true), "",
			"kernel trace stopped in pass 1 and started in pass 2 records in pass 2 again (SVC-1 with LCX-3)"},
		{"trace silent after start", stopStart(false), "LCX-3",
			"once started again the trace context is unmasked, so a pass without its record breaks LCX-3"},
		{"stop of inactive succeeds", inactive("stop", "SUCCESS"), "LCX-7",
			"a local stop of a context not active at loop start must be refused with ERROR_CONTEXT_NOT_STARTED"},
		{"stop of inactive refused", inactive("stop", "ERROR_CONTEXT_NOT_STARTED"), "",
			"the refusal LCX-7 asks for is not a violation"},
		{"start of inactive refused", inactive("start", "ERROR_CONTEXT_NOT_STARTED"), "",
			"the start refused as before"},
		{"start of inactive collects", insertAfter(inactive("start", "ERROR_CONTEXT_NOT_STARTED"), inPass(inactive("start", "ERROR_CONTEXT_NOT_STARTED"), trace.Kernel, 1),
			trace.Event{Type: trace.Record, Thread: 1, Dispatch: 1, Agent: 1, Service: trace.KernelTrace, Context: 12, Pass: trace.U64(1)}), "SVC-1",
			"a local start must not make kernel trace collect for a context that was not active at loop start"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []Violation
			for _, v := range Trace(renumber(c.tr)) {
				if v.Rule == "LCX-3" || v.Rule == "LCX-7" || v.Rule == "SVC-1" {
					got = append(got, v)
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("%s: want no LCX/SVC-1 violation, got:\n%s", c.reason, got[0])
			case c.want != "" && !slices.ContainsFunc(got, func(v Violation) bool { return v.Rule == c.want }):
				t.Errorf("%s: want %s, got %v", c.reason, c.want, got)
			}
		})
	}
}
