package rocprof

import (
	"fmt"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
)

// ListAvail is -L (--list-avail): the counters each GPU agent can collect,
// by block, with how many of a block's counters fit one hardware pass. It
// lists the agents of s's machine, or one agent of every kind the
// simulator has when s is nil. (rocprofv3 lists the real machine's agents
// through rocprofv3-avail, with PC sampling and SPM configurations, which
// the simulator has none of.)
func ListAvail(s *spec.Spec) (string, error) {
	machine := spec.Spec{}
	if s != nil {
		machine = *s
	} else {
		for _, k := range sim.Kinds() {
			machine.Agents = append(machine.Agents, spec.Agent{Kind: k})
		}
	}
	agents, err := machineAgents(machine)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, a := range agents {
		fmt.Fprintf(&b, "GPU:%d %s (%s)\n", i, a.Name, a.Arch)
		for _, blk := range a.CounterBlocks {
			fmt.Fprintf(&b, "  %s (%d per pass): %s\n", blk.Name, blk.Registers, strings.Join(blk.Counters, " "))
		}
	}
	b.WriteString("PC sampling: none. SPM: none.\n")
	return b.String(), nil
}

// Describe lists a run's settings as rocprofv3's --log-level config prints
// its configuration: one "key = value" per given option, sorted.
func (cfg Config) Describe() []string {
	keys := make([]string, 0, len(cfg.Values))
	width := 0
	for k := range cfg.Values {
		if k == subDirectory {
			continue
		}
		keys = append(keys, k)
		width = max(width, len(k))
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%-*s = %s", width, k, describe(cfg.Values[k])))
	}
	return out
}
