package spec

import (
	"slices"

	"github.com/replayspec/replayspec/trace"
)

// CounterBlock is one hardware counter block of an agent kind: the
// counters it has and how many it can count in one pass (its registers).
type CounterBlock struct {
	Name      string
	Registers int
	Counters  []string
}

// CounterCatalogue is every counter of the simulator's agent kinds, by
// block, with the per-agent register limits that decide how counters
// split into passes (AGT-1). sim holds the same table; a test in
// target/sim keeps the two equal. docs/spec-format.md prints it.
var CounterCatalogue = map[string][]CounterBlock{
	"MI200":    counterBlocks(8, 2, true),
	"MI300":    counterBlocks(8, 1, true),
	"consumer": counterBlocks(8, 4, false),
}

func counterBlocks(sqRegs, tccRegs int, hasEA bool) []CounterBlock {
	tcc := []string{"TCC_HIT", "TCC_MISS"}
	if hasEA {
		tcc = append(tcc, "TCC_EA_RDREQ")
	}
	return []CounterBlock{
		{Name: "SQ", Registers: sqRegs, Counters: []string{
			"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_LDS", "SQ_WAVE_CYCLES", "SQ_BUSY_CYCLES"}},
		{Name: "TCC", Registers: tccRegs, Counters: tcc},
		{Name: "TCP", Registers: 4, Counters: []string{"TCP_TCC_READ_REQ", "TCP_TOTAL_CACHE_ACCESSES"}},
		{Name: "GRBM", Registers: 2, Counters: []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE"}},
		{Name: "TA", Registers: 2, Counters: []string{"TA_BUSY_CYCLES"}},
	}
}

// KnownCounters lists the counters of the given agent kinds that the
// catalogue has, sorted; ok is false when none of the kinds is in the
// catalogue (a kind whose counters only its target knows).
func KnownCounters(kinds []string) (names []string, ok bool) {
	for _, k := range kinds {
		blocks, found := CounterCatalogue[k]
		if !found {
			continue
		}
		ok = true
		for _, b := range blocks {
			for _, c := range b.Counters {
				if !slices.Contains(names, c) {
					names = append(names, c)
				}
			}
		}
	}
	slices.Sort(names)
	return names, ok
}

// CounterGroupCount is how many passes counters need on an agent of kind
// (the greedy split every target makes: a pass holds at most Registers
// counters of each block), leaving out counters the kind lacks; ok is
// false for a kind the catalogue does not have.
func CounterGroupCount(kind string, counters []string) (int, bool) {
	blocks, ok := CounterCatalogue[kind]
	if !ok {
		return 0, false
	}
	var used []map[string]int
	seen := map[string]bool{}
	for _, c := range counters {
		if seen[c] {
			continue
		}
		seen[c] = true
		i := slices.IndexFunc(blocks, func(b CounterBlock) bool { return slices.Contains(b.Counters, c) })
		if i < 0 || blocks[i].Registers <= 0 {
			continue
		}
		b := blocks[i]
		placed := false
		for _, g := range used {
			if g[b.Name] < b.Registers {
				g[b.Name]++
				placed = true
				break
			}
		}
		if !placed {
			used = append(used, map[string]int{b.Name: 1})
		}
	}
	return len(used), true
}

// StatusNames are the statuses an SDK call can return
// (rocprofiler_status_t without its ROCPROFILER_STATUS_ prefix, in the
// reference's order): trace.StatusEnum as strings, so the two cannot drift.
var StatusNames = func() []string {
	out := make([]string, len(trace.StatusEnum))
	for i, s := range trace.StatusEnum {
		out[i] = string(s)
	}
	return out
}()

// StatusCalls are the calls expect.statuses can name: the SDK's API calls
// as traces name them, and the two local context calls of tool.misuse.
var StatusCalls = []string{
	"create_context", "configure_callback_tracing", "configure_counter_collection",
	"configure_kernel_trace", "configure_device_counting", "configure_pc_sampling",
	"configure_spm", "configure_thread_trace", "configure_external_correlation",
	"start_context", "stop_context", "operation_name", "operation_id",
	MisuseLocalStart, MisuseLocalStop,
}
