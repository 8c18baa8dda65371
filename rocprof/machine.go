package rocprof

import (
	"fmt"
	"strconv"

	"github.com/replayspec/replayspec/hsa"
)

// The simulated machine as rocprofv3 reports it. The SDK lists the CPU
// agents too (node 0 here), so the GPUs are nodes 1..n; agent handles are
// opaque numbers, ours node id + 1. Counters have one dimension, the XCC:
// an MI300-class agent has 8 XCCs, so each counter is read as 8 instance
// values that add up to the total; other agents have one.

// Machine facts the output needs beyond hsa.Agent.
const (
	PID      = 1000
	Hostname = "replayspec-sim"

	cpuHandle = 1 // the CPU agent: node 0

	dimensionXCC   = 1 // the dimension id of DIMENSION_XCC in our model
	dimensionName  = "DIMENSION_XCC"
	instanceIDBits = 16 // an instance id is the counter handle << 16 | instance
)

// agentHandle is the handle of a GPU agent in the output.
func agentHandle(id hsa.AgentID) uint64 { return uint64(id) + 1 }

// xccCount is how many XCC instances a GPU agent's counters have.
func xccCount(a hsa.Agent) int {
	if a.Family == hsa.FamilyMI300 {
		return 8
	}
	return 1
}

// waveFrontSize of a GPU agent's kernels.
func waveFrontSize(a hsa.Agent) int {
	if a.Family == hsa.FamilyConsumer {
		return 32
	}
	return 64
}

// gfxTargetVersion turns "gfx942" into 90402 and "gfx1100" into 110000,
// as HSA reports an architecture: major*10000 + minor*100 + stepping, the
// last two digits hexadecimal.
func gfxTargetVersion(arch string) int {
	if len(arch) < 6 {
		return 0
	}
	digits := arch[3:]
	major, err := strconv.Atoi(digits[:len(digits)-2])
	if err != nil {
		return 0
	}
	minor, err1 := strconv.ParseInt(digits[len(digits)-2:len(digits)-1], 16, 64)
	step, err2 := strconv.ParseInt(digits[len(digits)-1:], 16, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return major*10000 + int(minor)*100 + int(step)
}

// counterHandle numbers an agent's counters: agent id times 1000 plus the
// counter's 1-based position in the agent's blocks.
func counterHandle(a hsa.Agent, name string) (uint64, bool) {
	i := 0
	for _, b := range a.CounterBlocks {
		for _, c := range b.Counters {
			i++
			if c == name {
				return uint64(a.ID)*1000 + uint64(i), true
			}
		}
	}
	return 0, false
}

func counterBlock(a hsa.Agent, name string) string {
	for _, b := range a.CounterBlocks {
		for _, c := range b.Counters {
			if c == name {
				return b.Name
			}
		}
	}
	return ""
}

// splitInstances spreads a counter's total over n instances: equal shares,
// the remainder on the first ones, so the instances add up to the total.
func splitInstances(total uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = total / uint64(n)
		if uint64(i) < total%uint64(n) {
			out[i]++
		}
	}
	return out
}

// agentIndex is how the CSV names an agent (-A, metadata.cpp
// create_agent_index): absolute "Agent <node id>", relative (the default)
// "Agent <logical node id>", type-relative "GPU <n>" / "CPU <n>".
// On the simulated machine logical and absolute node ids agree: GPU i
// (1-based agent id) is node i and the (i-1)th GPU.
func agentIndex(mode string, a hsa.AgentID) string {
	if mode == "type-relative" {
		return fmt.Sprintf("GPU %d", uint64(a)-1)
	}
	return fmt.Sprintf("Agent %d", uint64(a))
}
