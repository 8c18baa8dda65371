package steps

import (
	"context"
	"os"
	"regexp"
	"sync"

	"github.com/cucumber/godog"
)

// stepRegexps holds each step's pattern compiled once: godog compiles a
// string pattern again for every scenario (InitializeScenario runs per
// scenario), which was a third of the features' CPU under -race.
var stepRegexps sync.Map // pattern -> *regexp.Regexp

// step is sc.Step with the pattern compiled once for all scenarios.
func step(sc *godog.ScenarioContext, pattern string, fn any) {
	re, ok := stepRegexps.Load(pattern)
	if !ok {
		re, _ = stepRegexps.LoadOrStore(pattern, regexp.MustCompile(pattern))
	}
	sc.Step(re.(*regexp.Regexp), fn)
}

// InitializeScenario registers every step and the scenario's state. Each
// file holds the steps of one domain, Given and Then alike, and registers
// them:
//
//	machine.go      the machine and the run
//	tool.go         the tool's contexts and services
//	plan.go         the tool's plan: pass count, continue, user data, local calls
//	application.go  the application's buffers and dispatches
//	faults.go       planted engine faults, a failing machine, an altered trace
//	verdicts.go     what the rule oracles report, errors, warnings
//	loop.go         the passes, their callbacks, pass count and continue calls
//	completion.go   completion as the application sees it
//	memory.go       what memory holds, and its snapshots and restores
//	identity.go     dispatch ids, correlation ids, user data, threads
//	contexts.go     local contexts, services and counter groups
//	api.go          the API surface and its configuration
//	rpv.go          the rocprofv3 front end
//	situations.go   one dispatch's own override, memory freed in a loop, other threads' submissions
func InitializeScenario(sc *godog.ScenarioContext) {
	sc.Before(func(ctx context.Context, _ *godog.Scenario) (context.Context, error) {
		return newWorld(ctx), nil
	})
	sc.After(func(ctx context.Context, scn *godog.Scenario, err error) (context.Context, error) {
		w, ok := ctx.Value(worldKey{}).(*world)
		if !ok {
			return ctx, nil
		}
		for _, v := range w.envSet {
			os.Unsetenv(v)
		}
		if err != nil || !w.ran {
			return ctx, nil
		}
		return ctx, w.earned(scn)
	})

	for _, register := range []func(*godog.ScenarioContext){
		registerMachine, registerTool, registerPlan, registerApplication, registerFaults,
		registerVerdicts, registerLoop, registerCompletion, registerMemory, registerIdentity,
		registerContexts, registerAPI, registerRPV, registerSituations, registerNested,
	} {
		register(sc)
	}
}
