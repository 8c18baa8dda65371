package steps

import (
	"context"
	"os"

	"github.com/cucumber/godog"
)

// Reusable pieces of step patterns.
const (
	kind  = `(MI200|MI300|consumer)`
	name  = `"([A-Za-z0-9_][A-Za-z0-9_-]*)"`
	optOf = `(?: of "([A-Za-z0-9_][A-Za-z0-9_-]*)")?`
	nums  = `((?:\d+)(?:(?:, | and )\d+)*)`
	// a dispatch sentence: "increment" [with 9] on "x" [and "y"] [on the MI200 agent] [as "k0"]
	dispatchTail = `"([a-z_]+)"(?: with (-?\d+))? on ("[\w-]+"(?: and "[\w-]+")?)(?: on the ` + kind + ` agent)?(?: as "([\w-]+)")?`
)

// InitializeScenario registers every step and the scenario's state.
func InitializeScenario(sc *godog.ScenarioContext) {
	sc.Before(func(ctx context.Context, _ *godog.Scenario) (context.Context, error) {
		return newWorld(ctx), nil
	})
	sc.After(func(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
		if w, ok := ctx.Value(worldKey{}).(*world); ok {
			for _, v := range w.envSet {
				os.Unsetenv(v)
			}
		}
		return ctx, nil
	})

	// The machine and the engine.
	sc.Step(`^a machine with (an? .+ agents?)(?: as well)?$`, machine)
	sc.Step(`^the engine has the planted faults? ([a-z_, ]+)$`, plantFaults)
	sc.Step(`^the machine cannot save more than (\d+) bytes of device memory at once$`, snapshotLimit)
	sc.Step(`^the machine fails part-way through its restore number (\d+)$`, restoreFails)
	sc.Step(`^the environment sets ([A-Z_]+) to "([^"]*)"$`, setEnv)
	sc.Step(`^the run gives up on a loop after (\d+) passes$`, maxPasses)

	// The tool: contexts and services.
	sc.Step(`^a tool that subscribes to kernel replay$`, subscribe)
	sc.Step(`^a tool that subscribes to kernel replay for the operations? (CONFIG|PASS|CONFIG and PASS)(?: only)?$`, subscribeOps)
	sc.Step(`^a tool that subscribes to kernel replay but never starts that context$`, subscribeUnstarted)
	sc.Step(`^the tool stops its replay context once `+name+` has completed$`, stopReplayAfter)
	sc.Step(`^the tool (?:also )?(traces kernel dispatches|samples PCs|records SPM|records a thread trace|collects the counters? [A-Z_, and]+|counts device-wide [A-Z_, and]+) in (?:a|its) context `+name+`$`, service)
	sc.Step(`^the tool configures `+name+` but never starts it$`, neverStarted)
	sc.Step(`^the tool configures kernel replay on a second context as well$`, configureTwice)
	sc.Step(`^the tool's external correlation callback blindly increments its id on every call$`, externalIncrement)
	sc.Step(`^the tool's external correlation callback answers (\d+) every time$`, externalFixed)

	// The tool: its plan.
	sc.Step(`^the tool's replay_pass_count (is left unset|returns \d+)$`, func(ctx context.Context, what string) error { return passCount(ctx, what, "") })
	sc.Step(`^the tool's replay_continue (is left unset|is ignored|stops after pass \d+|always says go on)$`, func(ctx context.Context, what string) error { return continuePolicy(ctx, what, "") })
	sc.Step(`^the tool asks for (\d+) pass(?:es)?$`, asksFor)
	sc.Step(`^the tool asks for (\d+) passes and stops after pass (\d+)$`, asksForStopping)
	sc.Step(`^the tool asks for (\d+) passes and its continue always says go on$`, asksForAlways)
	sc.Step(`^the tool asks for an indefinite loop and stops after pass (\d+)$`, indefiniteStopping)
	sc.Step(`^the tool asks for an indefinite loop whose continue never says stop$`, indefiniteNeverStops)
	sc.Step(`^the tool asks for an indefinite loop but installs no continue callback$`, indefiniteWithoutContinue)
	sc.Step(`^the tool asks for one pass per counter group of the dispatch's agent$`, asksForGroups)
	sc.Step(`^the tool asks for up to (\d+) passes and stops once "([A-Z_]+)" reads the same twice$`, converge)
	sc.Step(`^the tool leaves the pass count unset$`, func(ctx context.Context) error { return passCount(ctx, "is left unset", "") })
	sc.Step(`^the tool declines to replay `+name+`$`, func(ctx context.Context, d string) error { return passCount(ctx, "is left unset", d) })
	sc.Step(`^the tool asks for (\d+) pass(?:es)? for `+name+`$`, func(ctx context.Context, n, d string) error { return passCount(ctx, n, d) })
	sc.Step(`^for `+name+` the tool's continue (is left unset|stops after pass \d+|always says go on)$`, func(ctx context.Context, d, what string) error { return continuePolicy(ctx, what, d) })
	sc.Step(`^the tool writes (\d+) into the replay user data when the dispatch is configured$`, userData)
	sc.Step(`^the tool writes (\d+) into the replay user data when `+name+` is configured$`, userDataFor)
	sc.Step(`^the tool overwrites the user data as every pass begins$`, overwriteUserData)
	sc.Step(`^in (pass \d+|every pass) the tool (starts|stops) ("[\w-]+"(?:(?:, | and )"[\w-]+")*) locally$`, local)
	sc.Step(`^the tool tries to (start|stop) `+name+` locally (while the dispatch is configured|as the dispatch's configuration ends|as a pass ends|as a pass begins)$`, misuse)

	// The application.
	sc.Step(`^the application has a (?:(device|fine-grained|host) )?buffer `+name+` of (\d+) elements filled with (-?\d+)(?: on the `+kind+` agent)?$`, buffer)
	sc.Step(`^the application (?:then )?dispatches `+dispatchTail+`$`, dispatches)
	sc.Step(`^(?:meanwhile, )?(?:application )?thread (\d+) dispatches `+dispatchTail+` while "([\w-]+)" is in pass (\d+)$`, dispatchesDuring)
	sc.Step(`^(?:application )?thread (\d+) dispatches `+dispatchTail+`$`, dispatchesOnThread)
	sc.Step(`^the application submits "([a-z_]+)" on "([\w-]+)" together with a barrier packet in one write(?: as "([\w-]+)")?$`, submitsWithBarrier)
	sc.Step(`^the application launches "([a-z_]+)" on "([\w-]+)" as part of a graph(?: as "([\w-]+)")?$`, graphLaunch)
	sc.Step(`^the application frees `+name+` once `+name+` has completed$`, freeAfter)

	registerThen(sc)
}

func registerThen(sc *godog.ScenarioContext) {
	sc.Step(`^the rule checks find nothing wrong$`, checksPass)
	sc.Step(`^the checks report a violation of ([A-Z]+-\d+(?:(?:, | and )[A-Z]+-\d+)*)$`, checksReport)
	sc.Step(`^the checks report violations of ([A-Z]+-\d+(?:(?:, | and )[A-Z]+-\d+)*)$`, checksReport)
	sc.Step(`^the checks report nothing but ([A-Z]+-\d+(?:(?:, | and )[A-Z]+-\d+)*)$`, checksReportOnly)
	sc.Step(`^the run stops with an error mentioning "([^"]+)"$`, runFails)

	sc.Step(`^passes `+nums+` run`+optOf+`$`, func(ctx context.Context, which, label string) error { return passesRun(ctx, label, which) })
	sc.Step(`^(?:"([\w-]+)" runs )?exactly (\d+) passes(?: run)?$`, func(ctx context.Context, label string, n uint64) error { return nPassesRun(ctx, label, n) })
	sc.Step(`^(?:the dispatch|"([\w-]+)") is not replayed: it runs once, and no memory is saved$`, notReplayed)
	sc.Step(`^(?:the dispatch|"([\w-]+)") gets no replay callback and runs once$`, noReplayCallback)
	sc.Step(`^the kernel(?: of "([\w-]+)")? runs (once|twice|\d+ times) on the GPU$`, kernelRunsTimes)
	sc.Step(`^every pass reports total passes (\d+)$`, totalPasses)
	sc.Step(`^CONFIG (?:of "([\w-]+)" )?fires once, ENTER then EXIT, around every pass$`, configOnce)
	sc.Step(`^each pass opens with PASS ENTER and closes with PASS EXIT, in order$`, passesBracketed)
	sc.Step(`^the pass count is asked once, after CONFIG ENTER and before the first pass$`, passCountOnce)

	sc.Step(`^continue is consulted after pass(?:es)? `+nums+optOf+`$`, func(ctx context.Context, which, label string) error { return continueAfter(ctx, label, which) })
	sc.Step(`^continue is never consulted$`, continueNever)
	sc.Step(`^each consultation of continue follows the PASS EXIT of the pass it judges$`, continueAfterExit)

	sc.Step(`^the application sees (?:"([\w-]+)" complete once|one completion)$`, oneCompletion)
	sc.Step(`^the application sees (?:"([\w-]+)" complete once|one completion), after the last pass$`, oneCompletionAfterLoop)
	sc.Step(`^the application never sees (?:"([\w-]+)"|the dispatch) complete$`, neverCompletes)
	sc.Step(`^the loop(?: of "([\w-]+)")? is reported as never ending after (\d+) passes$`, neverEnded)
	sc.Step(`^the application cannot tell "([\w-]+)" from "([\w-]+)"$`, sameObservation)

	sc.Step(`^the buffer `+name+` holds (-?\d+) in every element$`, holdsAll)
	sc.Step(`^the buffer `+name+` holds the result of one run$`, holdsOneRun)
	sc.Step(`^memory is saved once, before the first pass$`, snapshotOnce)
	sc.Step(`^no memory is saved or restored(?: for "([\w-]+)")?$`, noSnapshot)
	sc.Step(`^memory is restored before pass(?:es)? `+nums+` only$`, restoredBefore)
	sc.Step(`^memory is never restored$`, func(ctx context.Context) error { return restoredBefore(ctx, "") })
	sc.Step(`^every pass starts from the memory the application left before the dispatch$`, sameInput)
	sc.Step(`^the snapshot(?: of "([\w-]+)")? saves (\d+) regions? of device memory$`, snapshotRegions)
	sc.Step(`^"([\w-]+)" runs on the agent only after "([\w-]+)"'s loop has ended$`, exclusive)

	sc.Step(`^the SDK warns "([a-z_]+)" once$`, warnsOnce)
	sc.Step(`^the SDK prints no warning$`, noWarning)

	registerMore(sc)
	registerRPV(sc)
}
