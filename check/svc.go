package check

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/trace"
)

// checkSVC judges the services that ignore local toggles and the pairs of
// services that cannot share a pass.
func checkSVC(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if d.replayed() {
			vs = append(vs, x.checkAgentWideEveryPass(d)...)
			vs = append(vs, x.checkConflictingServices(d)...)
		}
	})
	return append(vs, x.checkWarnedOnce("SVC-3", trace.WarnServiceConflict)...)
}

// SVC-2: PC sampling and device counting collect in every pass, local
// stop or not.
func (x *index) checkAgentWideEveryPass(d *dispatchView) []Violation {
	type cs struct {
		context uint64
		service trace.Service
	}
	seen := map[cs]map[uint64]bool{}
	var order []cs
	for _, i := range d.records {
		e := &x.ev[i]
		p, ok := x.recordPass(i)
		if !agentWide(e.Service) || !ok {
			continue
		}
		k := cs{e.Context, e.Service}
		if seen[k] == nil {
			seen[k] = map[uint64]bool{}
			order = append(order, k)
		}
		seen[k][p] = true
	}
	if len(order) > 0 {
		x.examined("SVC-2")
	}
	for _, k := range order {
		for n, pe := range d.passEnter {
			if n == len(d.passEnter)-1 && len(d.passExit) <= n && x.cutOff(d) {
				// The process ended inside this pass (a failed restore on
				// another thread, decision 17.19): it may never have run.
				continue
			}
			if !seen[k][uint64(n)] && !x.leftOutForConflict(d, k.service, uint64(n)) {
				return []Violation{x.violation("SVC-2", d.id, fmt.Sprintf("context %d's %s collected in some passes of dispatch %d but not in pass %d", k.context, k.service, d.id, n), x.concat([]int{pe}, x.localStopsOf(d, k.context))...)}
			}
		}
	}
	return nil
}

func (x *index) localStopsOf(d *dispatchView, ctx uint64) []int {
	var out []int
	for _, l := range d.locals {
		if e := &x.ev[l]; e.Call == trace.LocalStop && e.Context == ctx {
			out = append(out, l)
		}
	}
	return out
}

// conflicts are the service pairs that may not share a pass (SVC-3):
// counters with PC sampling only on MI2xx/MI3xx agents, thread trace with
// SPM on any.
var conflicts = [...]struct {
	a, b       trace.Service
	dataCenter bool
}{
	{trace.CounterCollection, trace.PCSampling, true},
	{trace.SPM, trace.ThreadTrace, false},
}

// dataCenterAgent reports whether the trace lists agent as an MI2xx/MI3xx
// part. Without an agent event the family is unknown and the
// family-specific limit is not judged.
func (x *index) dataCenterAgent(agent uint64) bool {
	for _, i := range x.types[ekAgentInfo] {
		if e := &x.ev[i]; e.Agent == agent {
			return e.Family.DataCenter()
		}
	}
	return false
}

// SVC-3: no pass has records of both services of a conflicting pair.
func (x *index) checkConflictingServices(d *dispatchView) []Violation {
	for _, c := range conflicts {
		if x.configured(c.a) && x.configured(c.b) {
			x.examined("SVC-3")
			break
		}
	}
	if !x.recordsBothOfAPair(d) {
		return nil // no pass can hold both
	}
	type pa struct{ pass, agent uint64 }
	type paService struct {
		pa
		service trace.Service
	}
	first := map[paService]int{} // the first record of each service in each pass on each agent
	seen := map[pa]bool{}
	var order []pa
	for _, i := range d.records {
		e := &x.ev[i]
		p, ok := x.recordPass(i)
		if !ok {
			continue
		}
		agent := e.Agent
		if agent == 0 {
			agent = d.agent
		}
		k := pa{p, agent}
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
		if _, dup := first[paService{k, e.Service}]; !dup {
			first[paService{k, e.Service}] = i
		}
	}
	slices.SortFunc(order, func(a, b pa) int { return int(a.pass) - int(b.pass) })
	for _, k := range order {
		for _, c := range conflicts {
			if c.dataCenter && !x.dataCenterAgent(k.agent) {
				continue
			}
			a, okA := first[paService{k, c.a}]
			b, okB := first[paService{k, c.b}]
			if okA && okB {
				return []Violation{x.violation("SVC-3", d.id, fmt.Sprintf("pass %d of dispatch %d on agent %d ran both %s and %s", k.pass, d.id, k.agent, c.a, c.b), a, b)}
			}
		}
	}
	return nil
}

// recordsBothOfAPair: d has records of both services of some conflicting
// pair, in whatever passes: without, checkConflictingServices finds
// nothing, and most loops record neither.
func (x *index) recordsBothOfAPair(d *dispatchView) bool {
	var has [len(conflicts)][2]bool
	for _, i := range d.records {
		s := x.ev[i].Service
		for k, c := range conflicts {
			has[k][0] = has[k][0] || s == c.a
			has[k][1] = has[k][1] || s == c.b
		}
	}
	for k := range conflicts {
		if has[k][0] && has[k][1] {
			return true
		}
	}
	return false
}

// leftOutForConflict: PC sampling may be missing from a pass of an
// MI2xx/MI3xx agent in which dispatch counters ran, when the SDK warned of
// the conflict (SVC-3 takes precedence over SVC-2 there).
func (x *index) leftOutForConflict(d *dispatchView, service trace.Service, pass uint64) bool {
	// Without the runtime's agent events the agent's family is unknown:
	// it may be an MI2xx/MI3xx part.
	if service != trace.PCSampling || (!x.dataCenterAgent(d.agent) && x.has(trace.AgentInfo)) {
		return false
	}
	// The SDK's warning says it left PC sampling out; in a trace without
	// the warnings the pass may have been left out unannounced.
	if x.reportsWarnings() && !x.serviceConflictWarned() {
		return false
	}
	for _, i := range d.records {
		if p, ok := x.recordPass(i); ok && p == pass && x.ev[i].Service == trace.CounterCollection {
			return true
		}
	}
	return false
}

// leftOutBeside reports whether a missing record of service in plain
// dispatch d is explained by a conflict (SVC-3, decisions 1 and 17.9):
// service_conflict was warned and d has a record of the service that is
// kept in its place (thread trace for SPM; counters for PC sampling on
// MI2xx/MI3xx; another context's counters for counters). Found by
// internal/specgen: LCX-4 took SPM left out beside thread trace for a mask
// that outlived its loop.
func (x *index) leftOutBeside(d *dispatchView, service trace.Service) bool {
	// The warning is what the SDK printed; a trace without warnings cannot
	// show it, and the kept service's record alone must do.
	if x.reportsWarnings() && !x.serviceConflictWarned() {
		return false
	}
	var kept trace.Service
	switch service {
	case trace.SPM:
		kept = trace.ThreadTrace
	case trace.PCSampling:
		if !x.dataCenterAgent(d.agent) {
			return false
		}
		kept = trace.CounterCollection
	case trace.CounterCollection:
		kept = trace.CounterCollection
	default:
		return false
	}
	for _, i := range d.records {
		if x.ev[i].Service == kept {
			return true
		}
	}
	return false
}

// configureCalls maps each service to the call that configures it.
var configureCalls = map[trace.Service]trace.Call{
	trace.CounterCollection: trace.CallConfigureCounters,
	trace.KernelTrace:       trace.CallConfigureKernelTrace,
	trace.DeviceCounting:    trace.CallConfigureDevice,
	trace.PCSampling:        trace.CallConfigurePCSampling,
	trace.SPM:               trace.CallConfigureSPM,
	trace.ThreadTrace:       trace.CallConfigureThreadTrace,
}

// configured reports whether some context configured service successfully.
func (x *index) configured(service trace.Service) bool {
	for _, i := range x.types[ekAPI] {
		if e := &x.ev[i]; e.Call == configureCalls[service] && e.Status.Is(trace.StatusSuccess) {
			return true
		}
	}
	return false
}
