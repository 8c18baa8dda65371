package sim

import (
	"fmt"
	"strings"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// Config describes the simulated machine.
type Config struct {
	// Agents get ids 1, 2, 3... in order.
	Agents []AgentConfig
	// Scheduled runs application threads one at a time under the
	// deterministic scheduler; false runs them truly in parallel.
	Scheduled bool

	// MemoryPerAgent bounds the bytes live on one agent (0: 8 GiB), so a
	// bad size is ErrOutOfMemory rather than a host out-of-memory crash.
	MemoryPerAgent uint64
	// FailSnapshotOver makes Snapshot fail when it would save more than
	// this many bytes (0: never), to exercise MEM-5.
	FailSnapshotOver uint64
	// FailRestoreAt makes the n-th Restore call of the runtime (1-based,
	// counting every snapshot) fail part-way, after its first region
	// (0: never), to exercise MEM-5.
	FailRestoreAt int
	// RestoreAll makes Restore write back every saved byte, as a runtime
	// without dirty tracking would (the baseline the benchmarks compare).
	RestoreAll bool
}

// AgentConfig is one GPU. Name defaults to the kind's product name.
type AgentConfig struct {
	Name string
	Kind string // one of Kinds()
	// SnapshotLimit makes a snapshot on this agent fail when it would
	// save more than this many bytes (0: never; FailSnapshotOver still
	// applies to every agent), to exercise MEM-5 on one agent only.
	SnapshotLimit uint64
}

const defaultMemoryPerAgent = 8 << 30

// agentKind is what every agent of one kind shares.
type agentKind struct {
	product  string
	arch     string
	family   hsa.Family
	waveSize uint64
	blocks   []hsa.CounterBlock
}

// The register limits are chosen so that one counter list splits
// differently per kind: SQ_WAVES, SQ_INSTS_VALU, SQ_INSTS_SALU, TCC_HIT,
// TCC_MISS, TCC_EA_RDREQ, GRBM_COUNT is 3 groups on MI300, 2 on MI200, and
// (without TCC_EA_RDREQ, which the consumer part lacks) 1 on consumer (AGT-1).
var kinds = map[hsa.Family]agentKind{
	hsa.FamilyMI200: {product: "MI210", arch: "gfx90a", family: hsa.FamilyMI200, waveSize: 64,
		blocks: counterBlocks(8, 2, true)},
	hsa.FamilyMI300: {product: "MI300X", arch: "gfx942", family: hsa.FamilyMI300, waveSize: 64,
		blocks: counterBlocks(8, 1, true)},
	hsa.FamilyConsumer: {product: "RX 7900 XTX", arch: "gfx1100", family: hsa.FamilyConsumer, waveSize: 32,
		blocks: counterBlocks(8, 4, false)},
}

// Kinds lists the agent kinds the simulator knows, in the trace's order of
// families.
func Kinds() []string {
	var out []string
	for _, f := range trace.Families {
		if _, ok := kinds[f]; ok {
			out = append(out, string(f))
		}
	}
	return out
}

func counterBlocks(sqRegs, tccRegs int, hasEA bool) []hsa.CounterBlock {
	tcc := []string{"TCC_HIT", "TCC_MISS"}
	if hasEA {
		tcc = append(tcc, "TCC_EA_RDREQ")
	}
	return []hsa.CounterBlock{
		{Name: "SQ", Registers: sqRegs, Counters: []string{
			"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_LDS", "SQ_WAVE_CYCLES", "SQ_BUSY_CYCLES"}},
		{Name: "TCC", Registers: tccRegs, Counters: tcc},
		{Name: "TCP", Registers: 4, Counters: []string{"TCP_TCC_READ_REQ", "TCP_TOTAL_CACHE_ACCESSES"}},
		{Name: "GRBM", Registers: 2, Counters: []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE"}},
		{Name: "TA", Registers: 2, Counters: []string{"TA_BUSY_CYCLES"}},
	}
}

// agentState is one simulated GPU.
type agentState struct {
	info          hsa.Agent
	kind          agentKind
	snapshotLimit uint64 // AgentConfig.SnapshotLimit
}

func buildAgents(cfgs []AgentConfig) ([]*agentState, error) {
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("sim: no agents configured (kinds: %s)", strings.Join(Kinds(), ", "))
	}
	agents := make([]*agentState, 0, len(cfgs))
	for i, c := range cfgs {
		k, ok := kinds[hsa.Family(c.Kind)]
		if !ok {
			return nil, fmt.Errorf("sim: agent %d: unknown kind %q (allowed: %s)", i+1, c.Kind, strings.Join(Kinds(), ", "))
		}
		name := c.Name
		if name == "" {
			name = k.product
		}
		agents = append(agents, &agentState{
			info:          hsa.Agent{ID: hsa.AgentID(i + 1), Name: name, Arch: k.arch, Family: k.family, CounterBlocks: k.blocks},
			kind:          k,
			snapshotLimit: c.SnapshotLimit,
		})
	}
	return agents, nil
}

// copyAgent returns a so that a caller cannot change the runtime's tables.
func copyAgent(a hsa.Agent) hsa.Agent {
	blocks := make([]hsa.CounterBlock, len(a.CounterBlocks))
	for i, b := range a.CounterBlocks {
		b.Counters = append([]string(nil), b.Counters...)
		blocks[i] = b
	}
	a.CounterBlocks = blocks
	return a
}
