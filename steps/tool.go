package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/spec"
)

// The steps about the tool's contexts and services: the replay subscription, the services beside it, external correlation.

func registerTool(sc *godog.ScenarioContext) {
	step(sc, `^a tool that subscribes to kernel replay$`, subscribe)
	step(sc, `^a tool that subscribes to kernel replay for the operations? (CONFIG|PASS|CONFIG and PASS)(?: only)?$`, subscribeOps)
	step(sc, `^a tool that subscribes to kernel replay but never starts that context$`, subscribeUnstarted)
	step(sc, `^the tool stops its replay context once `+name+` has completed$`, stopReplayAfter)
	step(sc, `^the tool (?:also )?(traces kernel dispatches|samples PCs|records SPM|records a thread trace|collects the counters? [A-Z_, and]+|counts device-wide [A-Z_, and]+) in (?:a|its) context `+name+`$`, service)
	step(sc, `^the tool configures `+name+` but never starts it$`, neverStarted)
	step(sc, `^the tool configures kernel replay on a second context as well$`, configureTwice)
	step(sc, `^the tool's external correlation callback blindly increments its id on every call$`, externalIncrement)
	step(sc, `^the tool's external correlation callback answers (\d+) every time$`, externalFixed)
}

const replayCtx = "replay"

// context is the tool's context of a name, made the first time a step
// names it.
func (w *world) context(name string) *spec.Context {
	for i := range w.s.Contexts {
		if w.s.Contexts[i].Name == name {
			return &w.s.Contexts[i]
		}
	}
	w.s.Contexts = append(w.s.Contexts, spec.Context{Name: name})
	return &w.s.Contexts[len(w.s.Contexts)-1]
}

func subscribe(ctx context.Context) error { return subscribeOps(ctx, "") }

func subscribeOps(ctx context.Context, ops string) error {
	get(ctx).context(replayCtx).Services.KernelReplay = &spec.KernelReplay{Operations: words(ops)}
	return nil
}

func subscribeUnstarted(ctx context.Context) error {
	if err := subscribe(ctx); err != nil {
		return err
	}
	return neverStarted(ctx, replayCtx)
}

func stopReplayAfter(ctx context.Context, name string) error {
	get(ctx).context(replayCtx).StopAfter = name
	return nil
}

func neverStarted(ctx context.Context, name string) error {
	get(ctx).context(name).Start = new(bool)
	return nil
}

func configureTwice(ctx context.Context) error {
	get(ctx).s.Tool.ConfigureTwice = true
	return nil
}

func service(ctx context.Context, what, name string) error {
	sv := &get(ctx).context(name).Services
	switch {
	case what == "traces kernel dispatches":
		sv.KernelTrace = &spec.Empty{}
	case what == "samples PCs":
		sv.PCSampling = &spec.Empty{}
	case what == "records SPM":
		sv.SPM = &spec.Empty{}
	case what == "records a thread trace":
		sv.ThreadTrace = &spec.Empty{}
	case strings.HasPrefix(what, "collects the counters "), strings.HasPrefix(what, "collects the counter "):
		sv.CounterCollection = &spec.CounterCollection{Counters: words(what[strings.Index(what, "counter")+8:])}
	case strings.HasPrefix(what, "counts device-wide "):
		sv.DeviceCounting = &spec.CounterCollection{Counters: words(strings.TrimPrefix(what, "counts device-wide "))}
	default:
		return fmt.Errorf("unknown service %q", what)
	}
	return nil
}

func externalIncrement(ctx context.Context) error {
	return externalCorrelation(ctx, spec.ExternalCorrelation{Mode: "increment"})
}

func externalFixed(ctx context.Context, v uint64) error {
	return externalCorrelation(ctx, spec.ExternalCorrelation{Mode: "fixed", Value: v})
}

func externalCorrelation(ctx context.Context, c spec.ExternalCorrelation) error {
	get(ctx).context(replayCtx).Services.ExternalCorrelation = &c
	return nil
}

// --- the tool: its plan ------------------------------------------------------
