package hsa

import (
	"fmt"
	"strings"
)

// CounterGroups splits counters into the fewest passes that the agent's
// counter blocks can serve: a pass holds at most Registers counters of each
// block. The split is greedy in request order, which is optimal because
// blocks do not share registers, and deterministic, so pass i always
// collects group i (AGT-1, RPV-3). A counter the agent does not have is an
// error naming it; a repeated counter is collected once.
func CounterGroups(a Agent, counters []string) ([][]string, error) {
	if len(counters) == 0 {
		return nil, nil // no counters, no groups: asked by every profiled dispatch that counts none
	}
	if a.Counters != nil {
		return sourceGroups(a, counters)
	}
	var groups [][]string
	var used []map[string]int // per group: counters placed per block
	seen := make(map[string]bool, len(counters))
	for _, name := range counters {
		if seen[name] {
			continue
		}
		seen[name] = true
		block, ok := blockOf(a, name)
		if !ok {
			return nil, unknownCounter(a, name)
		}
		if block.Registers <= 0 {
			return nil, fmt.Errorf("hsa: counter %q: block %s of agent %d (%s) has no counter registers", name, block.Name, a.ID, a.Name)
		}
		placed := false
		for i := range groups {
			if used[i][block.Name] < block.Registers {
				groups[i] = append(groups[i], name)
				used[i][block.Name]++
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []string{name})
			used = append(used, map[string]int{block.Name: 1})
		}
	}
	return groups, nil
}

// CollectableCounters partitions counters into those the agent can count
// and those it lacks, both in request order, so a tool can drop what an
// agent (a consumer part, say) does not have before grouping.
func CollectableCounters(a Agent, counters []string) (have, missing []string) {
	for _, name := range counters {
		if a.Counters != nil && a.Counters.HasCounter(name) {
			have = append(have, name)
		} else if _, ok := blockOf(a, name); ok && a.Counters == nil {
			have = append(have, name)
		} else {
			missing = append(missing, name)
		}
	}
	return have, missing
}

func blockOf(a Agent, counter string) (CounterBlock, bool) {
	for _, b := range a.CounterBlocks {
		for _, c := range b.Counters {
			if c == counter {
				return b, true
			}
		}
	}
	return CounterBlock{}, false
}

// sourceGroups checks and de-duplicates counters, then lets the agent's
// CounterSource schedule them.
func sourceGroups(a Agent, counters []string) ([][]string, error) {
	var names []string
	seen := make(map[string]bool, len(counters))
	for _, name := range counters {
		if seen[name] {
			continue
		}
		seen[name] = true
		if !a.Counters.HasCounter(name) {
			return nil, unknownCounter(a, name)
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, nil
	}
	return a.Counters.Groups(names)
}

func unknownCounter(a Agent, name string) error {
	if a.Counters != nil {
		return fmt.Errorf("hsa: agent %d (%s, %s) has no counter %q (its counters: %s)",
			a.ID, a.Name, a.Arch, name, a.Counters.Describe())
	}
	var blocks []string
	for _, b := range a.CounterBlocks {
		blocks = append(blocks, b.Name)
	}
	return fmt.Errorf("hsa: agent %d (%s, %s) has no counter %q (its blocks: %s)",
		a.ID, a.Name, a.Arch, name, strings.Join(blocks, ", "))
}
