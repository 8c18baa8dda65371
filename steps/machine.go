package steps

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// The steps about the machine and the run: its agents, the environment, the pass budget.

func registerMachine(sc *godog.ScenarioContext) {
	step(sc, `^a machine with (an? .+ agents?)(?: as well)?$`, machine)
	step(sc, `^the environment sets ([A-Z_]+) to "([^"]*)"$`, setEnv)
	step(sc, `^the run gives up on a loop after (\d+) passes$`, maxPasses)
}

func machine(ctx context.Context, kinds string) error {
	w := get(ctx)
	for _, k := range words(strings.NewReplacer("an ", "", "a ", "", " agent", "", " agents", "").Replace(kinds)) {
		w.s.Agents = append(w.s.Agents, spec.Agent{Name: fmt.Sprintf("gpu%d", len(w.s.Agents)), Kind: k})
	}
	return nil
}

// agent names the agent of a kind ("" is the first agent).
func (w *world) agent(kind string) (string, error) {
	if len(w.s.Agents) == 0 {
		w.s.Agents = []spec.Agent{{Name: "gpu0", Kind: string(trace.FamilyMI300)}}
	}
	if kind == "" {
		return w.s.Agents[0].Name, nil
	}
	for _, a := range w.s.Agents {
		if a.Kind == kind {
			return a.Name, nil
		}
	}
	return "", fmt.Errorf("the machine has no %s agent", kind)
}

func setEnv(ctx context.Context, name, value string) error {
	// Nothing may read it (PC-8); every scenario may run while it is set.
	if err := os.Setenv(name, value); err != nil {
		return err
	}
	get(ctx).envSet = append(get(ctx).envSet, name)
	return nil
}

func maxPasses(ctx context.Context, n uint64) error {
	get(ctx).s.Limits.MaxPasses = n
	return nil
}

// --- the tool: contexts and services ---------------------------------------
