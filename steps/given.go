package steps

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
)

// The Given and When steps: each adds to the spec of the scenario.

const replayCtx = "replay"

var listSplit = regexp.MustCompile(`\s*(?:,|\band\b)\s*`)

// words splits "A, B and C" into its items.
func words(s string) []string {
	var out []string
	for _, p := range listSplit.Split(strings.TrimSpace(s), -1) {
		if p = strings.Trim(strings.TrimSpace(p), `"`); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// numbers reads "0, 1 and 2" as numbers.
func numbers(s string) ([]uint64, error) {
	var out []uint64
	for _, p := range words(s) {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of numbers", s)
		}
		out = append(out, n)
	}
	return out, nil
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
		w.s.Agents = []spec.Agent{{Name: "gpu0", Kind: "MI300"}}
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

func (w *world) context(name string) *spec.Context {
	for i := range w.s.Contexts {
		if w.s.Contexts[i].Name == name {
			return &w.s.Contexts[i]
		}
	}
	w.s.Contexts = append(w.s.Contexts, spec.Context{Name: name})
	return &w.s.Contexts[len(w.s.Contexts)-1]
}

func subscribe(ctx context.Context) error {
	get(ctx).context(replayCtx).Services.KernelReplay = &spec.KernelReplay{}
	return nil
}

func subscribeOps(ctx context.Context, ops string) error {
	get(ctx).context(replayCtx).Services.KernelReplay = &spec.KernelReplay{Operations: words(ops)}
	return nil
}

func subscribeUnstarted(ctx context.Context) error {
	c := get(ctx).context(replayCtx)
	c.Services.KernelReplay = &spec.KernelReplay{}
	c.Start = new(bool)
	return nil
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
	get(ctx).context(replayCtx).Services.ExternalCorrelation = &spec.ExternalCorrelation{Mode: "increment"}
	return nil
}

func externalFixed(ctx context.Context, v uint64) error {
	get(ctx).context(replayCtx).Services.ExternalCorrelation = &spec.ExternalCorrelation{Mode: "fixed", Value: v}
	return nil
}

// plan is the plan a step changes: the tool's, or one dispatch's.
func (w *world) plan(dispatch string) (*spec.Plan, error) {
	if dispatch == "" {
		return &w.s.Tool.Plan, nil
	}
	// A dispatch's own plan starts from the tool's plan as the scenario
	// left it; it is merged in when the spec is complete (applyPlans), so
	// that steps may name a dispatch before the application makes it.
	if w.plans == nil {
		w.plans = map[string]*spec.Plan{}
	}
	if p, ok := w.plans[dispatch]; ok {
		return p, nil
	}
	p := &spec.Plan{}
	w.plans[dispatch] = p
	w.planOrder = append(w.planOrder, dispatch)
	return p, nil
}

// applyPlans gives each dispatch its own plan: the tool's plan with what
// the scenario changed for that dispatch.
func (w *world) applyPlans() error {
	for _, name := range w.planOrder {
		d, err := w.dispatch(name)
		if err != nil {
			return err
		}
		own := w.plans[name]
		p := w.s.Tool.Plan
		if own.Passes != "" {
			p.Passes = own.Passes
		}
		if own.Continue != nil || own.Passes != "" {
			p.Continue = own.Continue
		}
		if own.UserData != nil {
			p.UserData = own.UserData
		}
		d.Plan = &p
	}
	return nil
}

func (w *world) dispatch(name string) (*spec.Dispatch, error) {
	for i := range w.s.Application.Dispatches {
		if w.s.Application.Dispatches[i].Name == name {
			return &w.s.Application.Dispatches[i], nil
		}
	}
	return nil, fmt.Errorf("the application has no dispatch %q (yet)", name)
}

func u64(v uint64) *uint64 { return &v }

// passCount reads the pass-count table's left column: "is left unset",
// "returns N", "asks for N passes".
func passCount(ctx context.Context, what, dispatch string) error {
	p, err := get(ctx).plan(dispatch)
	if err != nil {
		return err
	}
	switch what {
	case "is left unset", "leaves the pass count unset", "declines to replay":
		p.Passes = spec.PassesNone
	case "one pass per counter group of the dispatch's agent":
		p.Passes = spec.PassesGroups
	default:
		m := regexp.MustCompile(`(\d+)`).FindString(what)
		n, err := strconv.ParseUint(m, 10, 64)
		if err != nil {
			return fmt.Errorf("unknown pass count %q", what)
		}
		p.Passes = spec.PassesOf(n)
	}
	return nil
}

// continuePolicy reads the table's middle column.
func continuePolicy(ctx context.Context, what, dispatch string) error {
	p, err := get(ctx).plan(dispatch)
	if err != nil {
		return err
	}
	switch {
	case what == "is left unset" || what == "is ignored" || what == "":
		p.Continue = nil
	case what == "always says go on" || what == "never says stop":
		p.Continue = &spec.ContinuePolicy{Always: true}
	case strings.HasPrefix(what, "stops after pass "):
		n, err := strconv.ParseUint(strings.TrimPrefix(what, "stops after pass "), 10, 64)
		if err != nil {
			return err
		}
		p.Continue = &spec.ContinuePolicy{StopAfter: u64(n)}
	default:
		return fmt.Errorf("unknown continue policy %q", what)
	}
	return nil
}

func asksFor(ctx context.Context, n uint64) error {
	p := &get(ctx).s.Tool.Plan
	p.Passes = spec.PassesOf(n)
	return nil
}

func asksForStopping(ctx context.Context, n, after uint64) error {
	p := &get(ctx).s.Tool.Plan
	p.Passes, p.Continue = spec.PassesOf(n), &spec.ContinuePolicy{StopAfter: u64(after)}
	return nil
}

func asksForAlways(ctx context.Context, n uint64) error {
	p := &get(ctx).s.Tool.Plan
	p.Passes, p.Continue = spec.PassesOf(n), &spec.ContinuePolicy{Always: true}
	return nil
}

func indefiniteStopping(ctx context.Context, after uint64) error {
	return asksForStopping(ctx, 0, after)
}

func indefiniteNeverStops(ctx context.Context) error { return asksForAlways(ctx, 0) }

func indefiniteWithoutContinue(ctx context.Context) error {
	p := &get(ctx).s.Tool.Plan
	p.Passes, p.Continue = spec.PassesOf(0), nil
	return nil
}

func asksForGroups(ctx context.Context) error {
	get(ctx).s.Tool.Plan.Passes = spec.PassesGroups
	return nil
}

func converge(ctx context.Context, n uint64, counter string) error {
	p := &get(ctx).s.Tool.Plan
	p.Passes = spec.PassesOf(n)
	p.Continue = &spec.ContinuePolicy{Converge: &spec.Converge{Counter: counter, AtMost: n}}
	return nil
}

func userData(ctx context.Context, v uint64) error {
	get(ctx).s.Tool.Plan.UserData = u64(v)
	return nil
}

func userDataFor(ctx context.Context, v uint64, dispatch string) error {
	p, err := get(ctx).plan(dispatch)
	if err != nil {
		return err
	}
	p.UserData = u64(v)
	return nil
}

func overwriteUserData(ctx context.Context) error {
	get(ctx).s.Tool.Plan.WriteUserDataInPass = true
	return nil
}

// local adds a local start or stop made in PASS ENTER.
func local(ctx context.Context, when, call, names string) error {
	p := &get(ctx).s.Tool.Plan
	pass := int64(-1)
	if when != "every pass" {
		n, err := strconv.ParseInt(strings.TrimPrefix(when, "pass "), 10, 64)
		if err != nil {
			return fmt.Errorf("unknown pass %q", when)
		}
		pass = n
	}
	lt := spec.LocalToggle{Pass: pass}
	if call == "starts" {
		lt.Start = words(names)
	} else {
		lt.Stop = words(names)
	}
	p.Local = append(p.Local, lt)
	return nil
}

var windows = map[string]string{
	"while the dispatch is configured":     "CONFIG_ENTER",
	"as the dispatch's configuration ends": "CONFIG_EXIT",
	"as a pass ends":                       "PASS_EXIT",
	"as a pass begins":                     "PASS_ENTER",
}

// misuse: the tool calls a local toggle where it chooses, on purpose.
func misuse(ctx context.Context, call, name, where string) error {
	in, ok := windows[where]
	if !ok {
		return fmt.Errorf("unknown window %q", where)
	}
	get(ctx).s.Tool.Misuse = append(get(ctx).s.Tool.Misuse, spec.Misuse{Call: "local_" + call, Context: name, In: in})
	return nil
}

func maxPasses(ctx context.Context, n uint64) error {
	get(ctx).s.Limits.MaxPasses = n
	return nil
}

func plantFaults(ctx context.Context, list string) error {
	fs, err := replay.ParseFaults(strings.Join(words(list), ","))
	if err != nil {
		return err
	}
	w := get(ctx)
	for f := range fs {
		w.faults[f] = true
	}
	return nil
}

func snapshotLimit(ctx context.Context, n uint64) error {
	get(ctx).machine.snapshotOver = n
	return nil
}

func restoreFails(ctx context.Context, n int) error {
	get(ctx).machine.restoreAt = n
	return nil
}

func setEnv(ctx context.Context, name, value string) error {
	// Nothing may read it (PC-8); every scenario may run while it is set.
	if err := os.Setenv(name, value); err != nil {
		return err
	}
	get(ctx).envSet = append(get(ctx).envSet, name)
	return nil
}

// buffer adds an application buffer.
func buffer(ctx context.Context, kind, name string, elements uint64, fill int64, agentKind string) error {
	w := get(ctx)
	agent, err := w.agent(agentKind)
	if err != nil {
		return err
	}
	b := spec.Buffer{Name: name, Agent: agent, Elements: elements, Fill: fill}
	switch kind {
	case "", "device":
	case "fine-grained":
		b.Kind = "fine"
	case "host":
		b.Kind = "host"
	default:
		return fmt.Errorf("unknown buffer kind %q", kind)
	}
	w.s.Application.Buffers = append(w.s.Application.Buffers, b)
	return nil
}

func freeAfter(ctx context.Context, buf, dispatch string) error {
	w := get(ctx)
	for i := range w.s.Application.Buffers {
		if w.s.Application.Buffers[i].Name == buf {
			w.s.Application.Buffers[i].FreeAfter = dispatch
			return nil
		}
	}
	return fmt.Errorf("no buffer %q", buf)
}

// ensureBuffer makes a buffer the scenario did not declare: 256 elements
// of 1 on the dispatch's agent.
func (w *world) ensureBuffer(name, agent string) {
	for _, b := range w.s.Application.Buffers {
		if b.Name == name {
			return
		}
	}
	w.s.Application.Buffers = append(w.s.Application.Buffers, spec.Buffer{Name: name, Agent: agent, Elements: 256, Fill: 1})
}

// dispatchOpts are the parts of a dispatch sentence.
type dispatchOpts struct {
	kernel, scalar, bufs, agentKind, name string
	thread                                uint64
	during                                *spec.During
	packets                               int
	graph                                 bool
}

func (w *world) addDispatch(o dispatchOpts) error {
	agent, err := w.agent(o.agentKind)
	if err != nil {
		return err
	}
	k, ok := spec.LookupKernel(o.kernel)
	if !ok {
		return fmt.Errorf("unknown kernel %q", o.kernel)
	}
	d := spec.Dispatch{Kernel: o.kernel, Agent: agent, Args: words(o.bufs), Thread: o.thread, During: o.during,
		Packets: o.packets, Graph: o.graph}
	if len(d.Args) != k.Buffers {
		return fmt.Errorf("kernel %s takes %d buffers, the step names %d", o.kernel, k.Buffers, len(d.Args))
	}
	for _, b := range d.Args {
		w.ensureBuffer(b, agent)
	}
	if o.scalar != "" {
		v, err := strconv.ParseInt(o.scalar, 10, 32)
		if err != nil {
			return err
		}
		d.Scalar = int32(v)
	}
	d.Name = o.name
	if d.Name == "" {
		d.Name = o.kernel
		for n := 2; ; n++ {
			if _, err := w.dispatch(d.Name); err != nil {
				break
			}
			d.Name = fmt.Sprintf("%s-%d", o.kernel, n)
		}
	}
	if d.Thread == 1 {
		d.Thread = 0
	}
	w.s.Application.Dispatches = append(w.s.Application.Dispatches, d)
	return nil
}

func dispatches(ctx context.Context, kernel, scalar, bufs, agentKind, name string) error {
	return get(ctx).addDispatch(dispatchOpts{kernel: kernel, scalar: scalar, bufs: bufs, agentKind: agentKind, name: name})
}

func dispatchesDuring(ctx context.Context, thread uint64, kernel, scalar, bufs, agentKind, name, other string, pass uint64) error {
	return get(ctx).addDispatch(dispatchOpts{kernel: kernel, scalar: scalar, bufs: bufs, agentKind: agentKind, name: name,
		thread: thread, during: &spec.During{Dispatch: other, Pass: pass}})
}

func dispatchesOnThread(ctx context.Context, thread uint64, kernel, scalar, bufs, agentKind, name string) error {
	return get(ctx).addDispatch(dispatchOpts{kernel: kernel, scalar: scalar, bufs: bufs, agentKind: agentKind, name: name, thread: thread})
}

func submitsWithBarrier(ctx context.Context, kernel, bufs, name string) error {
	return get(ctx).addDispatch(dispatchOpts{kernel: kernel, bufs: bufs, name: name, packets: 2})
}

func graphLaunch(ctx context.Context, kernel, bufs, name string) error {
	return get(ctx).addDispatch(dispatchOpts{kernel: kernel, bufs: bufs, name: name, graph: true})
}
