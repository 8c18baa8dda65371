package steps

import (
	"context"
	"os"

	"github.com/cucumber/godog"
)

// InitializeScenario registers every step and the scenario's state. Each
// file registers the steps it defines:
//
//	given.go        the machine, the tool's contexts, services and plan
//	application.go  the application's buffers and dispatches
//	faults.go       planted engine faults, a failing machine, an altered trace
//	then.go         the rule oracles, the pass loop, completion, warnings
//	memory.go       what memory holds, and its snapshots and restores
//	identity.go     dispatch ids, correlation ids, user data, threads
//	contexts.go     local contexts, services and counter groups
//	api.go          the API surface and its configuration
//	rpv.go          the rocprofv3 front end
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
		registerGiven, registerApplication, registerFaults,
		registerThen, registerMemory, registerIdentity, registerContexts, registerAPI,
		registerRPV,
	} {
		register(sc)
	}
}
