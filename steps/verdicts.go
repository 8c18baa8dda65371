package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// The steps about the verdicts of a run: what the rule oracles report, an error the run stops with, the warnings the SDK prints.

func registerVerdicts(sc *godog.ScenarioContext) {
	step(sc, `^the rule checks find nothing wrong$`, checksPass)
	step(sc, `^the checks report (?:a violation|violations) of `+ruleIDs+`$`, checksReport)
	step(sc, `^the checks report nothing but `+ruleIDs+`$`, checksReportOnly)
	step(sc, `^the run stops with an error mentioning "([^"]+)"$`, runFails)
	step(sc, `^the SDK warns "([a-z_]+)" once$`, warnsOnce)
	step(sc, `^the SDK prints no warning$`, noWarning)
}

// resultOf is where a Then step about the whole run's outcome begins: the
// scenario and its result, with the rule oracles' violations.
func resultOf(ctx context.Context) (*world, *runner.Result, error) {
	w := get(ctx)
	r, err := w.result(ctx)
	return w, r, err
}

func checksPass(ctx context.Context) error {
	w, r, err := resultOf(ctx)
	if err != nil {
		return err
	}
	if r.Err != nil || len(r.Violations) > 0 {
		return w.failf("the rule checks should find nothing wrong")
	}
	return nil
}

func checksReport(ctx context.Context, ids string) error {
	_, r, err := resultOf(ctx)
	if err != nil {
		return err
	}
	var got []string
	for _, v := range r.Violations {
		if !slices.Contains(got, v.Rule) {
			got = append(got, v.Rule)
		}
	}
	for _, id := range words(ids) {
		if !slices.Contains(got, id) {
			return fmt.Errorf("the rule checks should report a violation of %s; they reported %s:\n%s",
				id, strings.Join(got, ", "), violations(r.Violations))
		}
	}
	return nil
}

func checksReportOnly(ctx context.Context, ids string) error {
	if err := checksReport(ctx, ids); err != nil {
		return err
	}
	_, r, err := resultOf(ctx)
	if err != nil {
		return err
	}
	want := words(ids)
	for _, v := range r.Violations {
		if !slices.Contains(want, v.Rule) {
			return fmt.Errorf("the rule checks should report only %s, but also reported:\n%s", ids, v.Error())
		}
	}
	return nil
}

func runFails(ctx context.Context, text string) error {
	w, r, err := resultOf(ctx)
	if err != nil {
		return err
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), text) {
		return w.failf("the run should stop with an error mentioning %q; it ended with %v", text, r.Err)
	}
	return nil
}

// --- passes -----------------------------------------------------------

func warnsOnce(ctx context.Context, code string) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	all := byType(evs, trace.Warning)
	if ws := where(all, func(e trace.Event) bool { return e.Code == trace.WarningCode(code) }); len(ws) != 1 {
		return w.failf("the SDK should warn %s once; it did %d times:\n%s", code, len(ws), show(all...))
	}
	return nil
}

func noWarning(ctx context.Context) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	return w.expectNone(byType(evs, trace.Warning), "the SDK should print no warning")
}
