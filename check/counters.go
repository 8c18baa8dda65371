package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// Counter values, not just counter names (issue 20). AGT-1 says pass i
// collects counter group i of the dispatch's agent: a record that names the
// group's counters but not what the pass's kernel counted did not collect
// it. Three witnesses, from the strongest:
//
//   - the runtime's own account: a kernel event that carries counters is
//     what the runtime counted for that run (exact on the simulator), and
//     every counter record of that pass must say the same;
//   - the kernel itself: a counter of work every kernel does (waves or warps
//     launched, instructions, busy cycles) cannot read 0 for a kernel that
//     ran, whatever the hardware (the H200's groups after the first read 0);
//   - the other passes: a counter that does not depend on the pass (waves,
//     instructions) reads the same in every pass of one loop, since every
//     pass runs the same kernel from the same memory (MEM-2).

// checkCounterValues judges the values of every counter record of a
// replayed dispatch, pass by pass (AGT-1).
func checkCounterValues(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if d.replayed() {
			vs = append(vs, x.checkCounterValuesOf(d)...)
		}
	})
	return vs
}

// counterSeen is where a pass-independent counter was first read in a loop.
type counterSeen struct {
	value uint64
	pass  uint64
	at    int
}

func (x *index) checkCounterValuesOf(d *dispatchView) []Violation {
	var vs []Violation
	ran := true // the launch has work items (a spec's grid is at least 1)
	if a := x.appOf(d); a != nil {
		if g := x.ev[a.at].Grid; g != nil && uint64(g[0])*uint64(g[1])*uint64(g[2]) == 0 {
			ran = false
		}
	}
	type key struct {
		context uint64
		name    string
	}
	first := map[key]counterSeen{}
	for _, i := range d.records {
		e := &x.ev[i]
		if (e.Service != trace.CounterCollection && e.Service != trace.DeviceCounting) || len(e.Counters) == 0 {
			continue
		}
		p, ok := x.recordPass(i)
		if !ok {
			continue
		}
		x.examined("AGT-1")
		// The runtime's account of this pass's kernel.
		if ks := x.kernelsOfPass(d, p); len(ks) == 1 && len(x.ev[ks[0]].Counters) > 0 {
			k := ks[0]
			for _, c := range e.Counters {
				w, counted := counterNamed(x.ev[k].Counters, c.Name)
				switch {
				case !counted:
					vs = append(vs, x.violation("AGT-1", d.id, fmt.Sprintf("pass %d's %s record carries %s = %d, a counter the runtime did not count for that pass's kernel", p, e.Service, c.Name, c.Value), k, i))
				case w != c.Value:
					vs = append(vs, x.violation("AGT-1", d.id, fmt.Sprintf("pass %d's %s record says %s = %d, but the runtime counted %d for that pass's kernel", p, e.Service, c.Name, c.Value, w), k, i))
				}
			}
		}
		for _, c := range e.Counters {
			if ran && c.Value == 0 && everyKernelCounts(c.Name) {
				vs = append(vs, x.violation("AGT-1", d.id, fmt.Sprintf("pass %d's %s record says %s = 0, but every kernel that runs counts some (was the group collected in this pass?)", p, e.Service, c.Name), i))
				continue // one report: not again as a change between passes
			}
			if !passIndependent(c.Name) {
				continue
			}
			kk := key{e.Context, c.Name}
			f, seen := first[kk]
			switch {
			case !seen:
				first[kk] = counterSeen{c.Value, p, i}
			case f.pass != p && f.value != c.Value:
				vs = append(vs, x.violation("AGT-1", d.id, fmt.Sprintf("%s, which does not depend on the pass, reads %d in pass %d and %d in pass %d of the same loop", c.Name, f.value, f.pass, c.Value, p), f.at, i))
				first[kk] = counterSeen{c.Value, p, i} // one report per change
			}
		}
	}
	return vs
}

func counterNamed(cs []trace.Counter, name string) (uint64, bool) {
	if i := slices.IndexFunc(cs, func(c trace.Counter) bool { return c.Name == name }); i >= 0 {
		return cs[i].Value, true
	}
	return 0, false
}

// metricBase splits an NVIDIA metric name into its base and rollup
// (smsp__inst_executed.sum: smsp__inst_executed, sum); an AMD counter name
// has no rollup.
func metricBase(name string) (base, rollup string) {
	base, rollup, _ = strings.Cut(name, ".")
	return base, rollup
}

// everyKernelCounts reports whether a counter counts work that any kernel
// that runs does, so that it is never 0 for one: waves or warps and blocks
// launched, instructions issued, cycles while busy. Of an NVIDIA metric only
// the rollups over all units (sum, max, avg) qualify: min may be 0 on a
// unit the launch left idle.
func everyKernelCounts(name string) bool {
	switch name {
	case "SQ_WAVES", "SQ_WAVE_CYCLES", "SQ_BUSY_CYCLES", "GRBM_COUNT", "GRBM_GUI_ACTIVE":
		return true
	}
	base, rollup := metricBase(name)
	switch rollup {
	case "sum", "max", "avg":
	default:
		return false
	}
	switch base {
	case "smsp__warps_launched", "sm__warps_launched", "sm__ctas_launched", "smsp__inst_executed", "sm__inst_executed",
		"smsp__thread_inst_executed", "sm__cycles_elapsed", "gpc__cycles_elapsed", "gpu__time_duration":
		return true
	}
	return false
}

// passIndependent reports whether a counter's value cannot depend on the
// pass that read it: what was launched and executed (waves, warps, blocks,
// instructions), never cycles, caches or memory traffic, which may
// legitimately differ between runs of one kernel.
func passIndependent(name string) bool {
	if name == "SQ_WAVES" || strings.HasPrefix(name, "SQ_INSTS_") {
		return true
	}
	base, rollup := metricBase(name)
	if rollup != "sum" {
		return false // a max or an average over units may move with scheduling
	}
	switch base {
	case "smsp__warps_launched", "sm__warps_launched", "sm__ctas_launched", "smsp__inst_executed", "sm__inst_executed",
		"smsp__thread_inst_executed":
		return true
	}
	return false
}
