package sim

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// shape is what a dispatch's duration and counter values derive from:
// the kernel, the launch and the agent kind, never the pass, so counters
// that do not depend on the pass are equal across passes (RPV-8).
type shape struct {
	waves, items, buffers, valuPerItem, nsPerWave uint64
	duration                                      uint64 // ns
}

const cyclesPerNs = 2 // a 2 GHz shader clock

func dispatchShape(k *kernelDef, kind agentKind, grid, workgroup, items uint64) shape {
	groups := (grid + workgroup - 1) / workgroup
	waves := groups * ((workgroup + kind.waveSize - 1) / kind.waveSize)
	return shape{
		waves: waves, items: items, buffers: uint64(k.Buffers),
		valuPerItem: k.valuPerItem, nsPerWave: k.nsPerWave,
		duration: kernelBaseTime + waves*k.nsPerWave,
	}
}

// checkCounters accepts counters the agent has and can count in one pass;
// splitting a larger set into passes is the tool's job (AGT-1).
func checkCounters(a hsa.Agent, counters []string) error {
	groups, err := hsa.CounterGroups(a, counters)
	if err != nil {
		return err
	}
	if len(groups) > 1 {
		return fmt.Errorf("counters %v need %d passes on agent %d (%s); one dispatch collects one group", counters, len(groups), a.ID, a.Name)
	}
	return nil
}

func counterValues(counters []string, s shape) map[string]uint64 {
	if len(counters) == 0 {
		return nil // read only: a dispatch that counts nothing needs no map
	}
	values := make(map[string]uint64, len(counters))
	for _, c := range counters {
		values[c] = counterValue(c, s)
	}
	return values
}

// countedAs is what the runtime counted for one run of a profiled packet,
// the dispatch's counters then the agent's, each once, in the packet's
// order: the kernel event's counters (docs/trace.md).
func countedAs(p *hsa.Profile, s shape) []trace.Counter {
	var out []trace.Counter
	for _, names := range [][]string{p.Counters, p.Device} {
		for _, n := range names {
			if !slices.ContainsFunc(out, func(c trace.Counter) bool { return c.Name == n }) {
				out = append(out, trace.Counter{Name: n, Value: counterValue(n, s)})
			}
		}
	}
	return out
}

func counterValue(name string, s shape) uint64 {
	cycles := s.duration * cyclesPerNs
	lines := (s.items*4*s.buffers + 127) / 128 // 128-byte cache lines touched
	hits := lines * 3 / 4
	switch name {
	case "SQ_WAVES":
		return s.waves
	case "SQ_INSTS_VALU":
		return s.items * s.valuPerItem
	case "SQ_INSTS_SALU":
		return s.waves * 6
	case "SQ_INSTS_LDS":
		return 0 // no library kernel uses LDS
	case "SQ_WAVE_CYCLES":
		return s.waves * s.nsPerWave * cyclesPerNs
	case "SQ_BUSY_CYCLES", "GRBM_COUNT", "GRBM_GUI_ACTIVE":
		return cycles
	case "TCC_HIT":
		return hits
	case "TCC_MISS", "TCC_EA_RDREQ":
		return lines - hits
	case "TCP_TCC_READ_REQ":
		return lines
	case "TCP_TOTAL_CACHE_ACCESSES":
		return (s.items*4*s.buffers + 63) / 64
	case "TA_BUSY_CYCLES":
		return s.waves * 4 * s.buffers
	}
	return 0 // unreachable: checkCounters admits only the agent's counters
}
