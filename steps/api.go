package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/trace"
)

// The Then steps of the API surface (API) and of how a tool switches
// replay on (ACT): configuration calls, operation queries, callback
// payloads.

func registerAPI(sc *godog.ScenarioContext) {
	step(sc, `^the tool switched replay on with the ordinary callback tracing configuration, which succeeded$`, ordinaryConfig)
	step(sc, `^the (counter collection|kernel trace) configuration succeeded too$`, otherConfigOK)
	step(sc, `^asking by id and by name gives CONFIG=1 and PASS=2$`, opQueries)
	step(sc, `^asking for (?:the operations? )?((?:[A-Z]+)(?:(?:, | and )[A-Z]+)*) by name finds nothing$`, opNamesMissing)
	step(sc, `^asking for operation ids (\d+) and above finds nothing$`, opIDsMissing)
	step(sc, `^CONFIG and PASS each deliver an ENTER and an EXIT$`, enterAndExit)
	step(sc, `^every replay callback's payload has its size and the dispatch's info filled in$`, payloadFilled)
	step(sc, `^no CONFIG payload carries a pass field$`, configPayloadClean)
	step(sc, `^no PASS payload carries the tool's pass count or continue callbacks$`, passPayloadClean)
	step(sc, `^the second configuration of kernel replay is refused with ([A-Z_]+)$`, secondConfigRefused)
}

// status is a status without the SDK's prefix.

// replayConfigs are the callback tracing configurations for kernel replay.
func replayConfigs(evs []trace.Event) []trace.Event {
	return where(apiCalls(evs, trace.CallConfigureCallback), func(e trace.Event) bool {
		return e.Domain == trace.DomainKernelReplay
	})
}

func ordinaryConfig(ctx context.Context) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	api := byType(evs, trace.API)
	if !slices.ContainsFunc(replayConfigs(evs), func(e trace.Event) bool { return e.Status.Is(trace.StatusSuccess) }) {
		return w.failf("replay should be switched on by configuring callback tracing for KERNEL_REPLAY:\n%s", show(api...))
	}
	for _, e := range api {
		if strings.Contains(strings.ToLower(string(e.Call)), "replay") {
			return w.failf("there is no dedicated kernel replay call, yet the tool made one:\n%s", show(e))
		}
	}
	return nil
}

func otherConfigOK(ctx context.Context, what string) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	call := trace.Call("configure_" + strings.ReplaceAll(what, " ", "_"))
	if cs := apiCalls(evs, call); len(cs) == 0 || !cs[0].Status.Is(trace.StatusSuccess) {
		return w.failf("%s should be configured alongside replay:\n%s", what, show(byType(evs, trace.API)...))
	}
	return nil
}

func secondConfigRefused(ctx context.Context, want string) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	if cs := replayConfigs(evs); len(cs) != 2 || !cs[0].Status.Is(trace.StatusSuccess) || !cs[1].Status.Is(trace.Status(want)) {
		return w.failf("the first configuration should succeed and the second return %s:\n%s", want, show(cs...))
	}
	return nil
}

// opQuery reads an operation query: "NAME=ID", with "?" on the side the
// SDK did not find (docs/oracles.md).
func opQuery(e trace.Event) (name trace.Op, id string) {
	if e.OpID != nil {
		id = fmt.Sprint(*e.OpID)
	}
	return trace.Op(strings.TrimPrefix(string(e.OpName), "ROCPROFILER_KERNEL_REPLAY_")), id
}

func opQueries(ctx context.Context) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	want := map[trace.Op]string{trace.OpConfig: "1", trace.OpPass: "2"}
	found := map[string]int{}
	for _, call := range []trace.Call{trace.CallOperationName, trace.CallOperationID} {
		for _, e := range apiCalls(evs, call) {
			name, id := opQuery(e)
			if wantID, ok := want[name]; ok {
				if id != wantID || !e.Status.Is(trace.StatusSuccess) {
					return w.failf("%s should be operation %s:\n%s", name, wantID, show(e))
				}
				found[string(call)+string(name)]++
			}
		}
	}
	if len(found) != 4 {
		return w.failf("the tool should have asked both ways for CONFIG and PASS:\n%s", show(byType(evs, trace.API)...))
	}
	return nil
}

func opNamesMissing(ctx context.Context, names string) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	byName := apiCalls(evs, trace.CallOperationID)
	for _, n := range words(names) {
		asked := where(byName, func(e trace.Event) bool { name, _ := opQuery(e); return name == trace.Op(n) })
		if len(asked) == 0 {
			return w.failf("the tool never asked for %s:\n%s", n, show(byName...))
		}
		for _, e := range asked {
			if !e.Status.Is(trace.StatusOperationNotFound) {
				return w.failf("%s should not be an operation:\n%s", n, show(e))
			}
		}
	}
	return nil
}

func opIDsMissing(ctx context.Context, from int64) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	asked := false
	for _, e := range apiCalls(evs, "operation_name") {
		_, idText := opQuery(e)
		var id int64
		if _, err := fmt.Sscan(idText, &id); err != nil || id < from {
			continue
		}
		asked = true
		if !e.Status.Is(trace.StatusOperationNotFound) {
			return w.failf("operation id %d should not exist:\n%s", id, show(e))
		}
	}
	if !asked {
		return w.failf("the tool never asked for operation id %d or above", from)
	}
	return nil
}

func enterAndExit(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	for _, op := range []trace.Op{trace.OpConfig, trace.OpPass} {
		if len(v.callbacks(op, trace.PhaseEnter)) == 0 || len(v.callbacks(op, trace.PhaseEnter)) != len(v.callbacks(op, trace.PhaseExit)) {
			return w.failf("%s should deliver an ENTER and an EXIT each time:\n%s", op, show(v.of(trace.Callback)...))
		}
	}
	for _, e := range v.of(trace.Callback) {
		if e.Op != trace.OpConfig && e.Op != trace.OpPass {
			return w.failf("the domain has only CONFIG and PASS callbacks:\n%s", show(e))
		}
	}
	return nil
}

func payloadFilled(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	return w.expectEvery(v.of(trace.Callback), func(e trace.Event) bool { return carriesAll(e.Payload, "size", "dispatch_info") },
		"every payload should arrive with its size and dispatch info")
}

// carriesAll: a payload carries every one of fields.
func carriesAll(payload []string, fields ...string) bool {
	return !slices.ContainsFunc(fields, func(f string) bool { return !slices.Contains(payload, f) })
}

// carriesNone fails on the first callback whose payload carries one of
// fields, which op's payloads should not.
func (w *world) carriesNone(cbs []trace.Event, op trace.Op, fields ...string) error {
	for _, e := range cbs {
		for _, f := range fields {
			if slices.Contains(e.Payload, f) {
				return w.failf("a %s payload should carry no %s:\n%s", op, f, show(e))
			}
		}
	}
	return nil
}

func configPayloadClean(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	return w.carriesNone(v.callbacks(trace.OpConfig, anyPhase), trace.OpConfig, "current_pass", "total_passes", "replay_start_context", "replay_stop_context")
}

func passPayloadClean(ctx context.Context) error {
	w, ps, err := passCallbacksOf(ctx)
	if err != nil {
		return err
	}
	return w.carriesNone(ps, trace.OpPass, "replay_pass_count", "replay_continue")
}
