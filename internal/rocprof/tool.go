package rocprof

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/replayspec/replayspec/internal/harness"
	"github.com/replayspec/replayspec/internal/hsa"
	"github.com/replayspec/replayspec/internal/replay"
	"github.com/replayspec/replayspec/internal/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Groups is what the tool collects on one agent: every --pmc group without
// the counters the agent lacks, split by the agent's counter registers
// (hsa.CounterGroups) when it does not fit one hardware pass, empty groups
// dropped, in order. Under kernel replay pass i collects group i and the
// pass count is len(Groups) (RPV-3, AGT-1), so one --pmc list can need a
// different number of passes on agents of different kinds.
func Groups(a hsa.Agent, pmc [][]string) ([][]string, error) {
	var out [][]string
	for _, g := range pmc {
		have, _ := hsa.CollectableCounters(a, g)
		split, err := hsa.CounterGroups(a, have)
		if err != nil {
			return nil, err
		}
		out = append(out, split...)
	}
	return out, nil
}

// CounterRecord is one dispatch counting record: one dispatch, one pass.
type CounterRecord struct {
	Thread      hsa.ThreadID
	Dispatch    replay.DispatchInfo
	Correlation replay.CorrelationID
	Start, End  uint64
	Counters    []replay.CounterValue
	// Pass is the replay pass read from the thread's published state; it
	// is set under kernel replay only (RPV-6).
	Pass *uint64
}

// KernelRecord is one kernel dispatch trace record (one per pass under
// kernel replay).
type KernelRecord struct {
	Thread      hsa.ThreadID
	Dispatch    replay.DispatchInfo
	Correlation replay.CorrelationID
	Start, End  uint64
}

// Event is one thing the tool did or saw, for tests and for the curious.
type Event struct {
	What     string // create_context, configure, pass_count, CONFIG_ENTER, PASS_ENTER, PASS_EXIT, CONFIG_EXIT
	Context  string // the context's role: "counters" or "kernel_replay"
	Thread   hsa.ThreadID
	Dispatch uint64
	Agent    hsa.AgentID
	Pass     uint64   // for PASS callbacks
	N        uint64   // pass_count's answer; total_passes in PASS callbacks
	Payload  []string // non-zero payload fields the tool left or found
}

// Pass is one run of the application and what it produced. Kernel replay
// and a single group make one; application replay makes one per group.
type Pass struct {
	// Number is the application replay pass (1-based), 0 for a single run.
	Number int
	// PMC is the --pmc groups this run collected.
	PMC [][]string
	// KernelReplay tells whether the run had the kernel replay context.
	KernelReplay bool
	Agents       []hsa.Agent
	// AgentGroups is Groups for every agent.
	AgentGroups map[hsa.AgentID][][]string
	Counters    []CounterRecord
	Kernels     []KernelRecord
	// InitTime and FiniTime are the virtual clock at start and end.
	InitTime, FiniTime uint64
	// Events is what the tool did; Trace is what the SDK and the
	// simulator recorded.
	Events []Event
	Trace  []trace.Event
	// Published is the per-thread pass state left at the end of the run
	// (empty when every PASS EXIT cleared it, RPV-4).
	Published map[hsa.ThreadID]uint64
}

// Result is a whole profiling session.
type Result struct {
	Options Options
	Spec    spec.Spec
	Passes  []*Pass
}

// Run profiles s's application (buffers and dispatches; its contexts and
// tool plan are ignored) as rocprofv3 with o would. o must have passed
// Check. A counter or group the machine cannot collect is a *Diagnostic.
func Run(o Options, s spec.Spec) (*Result, error) {
	s = spec.Defaults(s)
	agents, err := machineAgents(s)
	if err != nil {
		return nil, err
	}
	if err := checkCounters(o, s, agents); err != nil {
		return nil, err
	}
	res := &Result{Options: o, Spec: s}
	if !o.KernelReplay() && len(o.PMC) > 1 {
		// RPV-5: application replay, the whole application once per group,
		// each on a fresh machine.
		for i, g := range o.PMC {
			p, err := runOnce(s, [][]string{g}, false, o)
			if err != nil {
				return res, fmt.Errorf("application replay pass %d: %w", i+1, err)
			}
			p.Number = i + 1
			res.Passes = append(res.Passes, p)
		}
		return res, nil
	}
	p, err := runOnce(s, o.PMC, o.KernelReplay(), o)
	if err != nil {
		return res, err
	}
	res.Passes = append(res.Passes, p)
	return res, nil
}

func simConfig(s spec.Spec) sim.Config {
	cfg := sim.Config{Scheduled: true}
	for _, a := range s.Agents {
		cfg.Agents = append(cfg.Agents, sim.AgentConfig{Kind: a.Kind}) // product names, as rocprofv3 reports
	}
	return cfg
}

func machineAgents(s spec.Spec) ([]hsa.Agent, error) {
	rt, err := sim.New(simConfig(s))
	if err != nil {
		return nil, &Diagnostic{Msg: err.Error()}
	}
	return rt.Agents(), nil
}

// checkCounters refuses counters that no agent has and, without kernel
// replay, groups that an agent running dispatches cannot count in one
// hardware pass (rocprofv3 does not split a group; kernel replay here
// does, see Groups).
func checkCounters(o Options, s spec.Spec, agents []hsa.Agent) error {
	var errs []error
	seen := map[string]bool{}
	for _, g := range o.PMC {
		for _, c := range g {
			if seen[c] {
				continue
			}
			seen[c] = true
			found := false
			for _, a := range agents {
				if have, _ := hsa.CollectableCounters(a, []string{c}); len(have) > 0 {
					found = true
				}
			}
			if !found {
				errs = append(errs, &Diagnostic{Msg: fmt.Sprintf("--pmc counter %q is not a counter of any agent of spec %s (%s)", c, s.Name, counterList(agents))})
			}
		}
	}
	if len(errs) > 0 || o.KernelReplay() {
		return errors.Join(errs...)
	}
	used := map[string]bool{}
	for _, d := range s.Application.Dispatches {
		used[d.Agent] = true
	}
	for i, a := range agents {
		if i >= len(s.Agents) || !used[s.Agents[i].Name] {
			continue
		}
		for gi, g := range o.PMC {
			have, _ := hsa.CollectableCounters(a, g)
			split, err := hsa.CounterGroups(a, have)
			if err != nil {
				errs = append(errs, &Diagnostic{Msg: err.Error()})
				continue
			}
			if len(split) > 1 {
				var parts []string
				for _, p := range split {
					parts = append(parts, strings.Join(p, " "))
				}
				errs = append(errs, &Diagnostic{Msg: fmt.Sprintf("--pmc group %d (%s) does not fit one hardware pass on agent %d (%s, %s): it needs %d (%s); give them as separate --pmc groups, or use --replay-mode kernel",
					gi+1, strings.Join(g, " "), a.ID, a.Name, a.Arch, len(split), strings.Join(parts, " | "))})
			}
		}
	}
	return errors.Join(errs...)
}

func counterList(agents []hsa.Agent) string {
	var parts []string
	done := map[string]bool{}
	for _, a := range agents {
		if done[a.Arch] {
			continue
		}
		done[a.Arch] = true
		var names []string
		for _, b := range a.CounterBlocks {
			names = append(names, b.Counters...)
		}
		parts = append(parts, a.Arch+" has "+strings.Join(names, " "))
	}
	return strings.Join(parts, "; ")
}

// runOnce plays the application once on a fresh machine under the tool.
func runOnce(s spec.Spec, pmc [][]string, kernelReplay bool, o Options) (*Pass, error) {
	rt, err := sim.New(simConfig(s))
	if err != nil {
		return nil, &Diagnostic{Msg: err.Error()}
	}
	rec := trace.NewRecorder(rt.Clock)
	rt.SetRecorder(rec)
	sdk := replay.New(rt, replay.Options{Recorder: rec, MaxPasses: s.Limits.MaxPasses})
	p := &Pass{PMC: pmc, KernelReplay: kernelReplay, Agents: rt.Agents(), AgentGroups: map[hsa.AgentID][][]string{}}
	for _, a := range p.Agents {
		g, err := Groups(a, pmc)
		if err != nil {
			return nil, &Diagnostic{Msg: err.Error()}
		}
		p.AgentGroups[a.ID] = g
	}
	t := &tool{sdk: sdk, pass: p, published: map[hsa.ThreadID]uint64{},
		label: map[hsa.ThreadID]string{}, labelOf: map[uint64]string{}, running: map[string]int64{}}
	if err := t.setUp(len(pmc) > 0, o.KernelTrace || o.Stats, kernelReplay); err != nil {
		return nil, err
	}
	p.InitTime = rt.Clock()
	runErr := harness.RunApplication(rt, rt, sdk, rec, s, t)
	p.FiniTime = rt.Clock()
	p.Trace = rec.Events()
	t.mu.Lock()
	p.Published = maps(t.published)
	t.mu.Unlock()
	return p, errors.Join(runErr, errors.Join(rt.Faults()...))
}

func maps(m map[hsa.ThreadID]uint64) map[hsa.ThreadID]uint64 {
	out := make(map[hsa.ThreadID]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// tool is the rocprofv3 tool library: contexts, the replay callback and
// the record callbacks.
type tool struct {
	sdk  *replay.SDK
	pass *Pass

	mu        sync.Mutex
	published map[hsa.ThreadID]uint64 // per-thread pass state (RPV-4, CB-4)
	label     map[hsa.ThreadID]string // spec dispatch each thread is submitting
	labelOf   map[uint64]string       // dispatch id -> spec dispatch
	running   map[string]int64        // spec dispatch -> pass running
}

func (t *tool) event(e Event) {
	t.mu.Lock()
	t.pass.Events = append(t.pass.Events, e)
	t.mu.Unlock()
}

func statusErr(call string, st replay.Status) error {
	if st == replay.StatusSuccess {
		return nil
	}
	return fmt.Errorf("rocprof tool: %s: %s", call, st)
}

// setUp creates the tool's contexts as rocprofv3's tool library does: one
// for counter collection (and kernel dispatch tracing), and the kernel
// replay context only under the flag (RPV-2).
func (t *tool) setUp(counters, kernelTrace, kernelReplay bool) error {
	var started []replay.ContextID
	if counters || kernelTrace {
		ctx, st := t.sdk.CreateContext()
		t.event(Event{What: "create_context", Context: "counters"})
		if err := statusErr("create_context", st); err != nil {
			return err
		}
		if counters {
			t.event(Event{What: "configure", Context: "counters", Payload: []string{"counter_collection"}})
			if err := statusErr("configure_counter_collection", t.sdk.ConfigureCounterCollection(ctx, t.selectCounters, t.onCounters)); err != nil {
				return err
			}
		}
		if kernelTrace {
			t.event(Event{What: "configure", Context: "counters", Payload: []string{"kernel_trace"}})
			if err := statusErr("configure_kernel_trace", t.sdk.ConfigureKernelTrace(ctx, t.onKernel)); err != nil {
				return err
			}
		}
		started = append(started, ctx)
	}
	if kernelReplay {
		ctx, st := t.sdk.CreateContext()
		t.event(Event{What: "create_context", Context: "kernel_replay"})
		if err := statusErr("create_context", st); err != nil {
			return err
		}
		t.event(Event{What: "configure", Context: "kernel_replay", Payload: []string{"KERNEL_REPLAY"}})
		if err := statusErr("configure_callback_tracing", t.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, t.onReplay)); err != nil {
			return err
		}
		started = append(started, ctx)
	}
	for _, ctx := range started {
		if err := statusErr("start_context", t.sdk.StartContext(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// submitting notes which spec dispatch a thread is about to submit.
// The tool's side of harness.Hooks: rocprofv3 needs to know what each
// thread submits, and which pass a dispatch is in.

// ThreadStarted implements harness.Hooks.
func (t *tool) ThreadStarted(hsa.ThreadID) {}

// Submitting implements harness.Hooks.
func (t *tool) Submitting(th hsa.ThreadID, name string) {
	t.mu.Lock()
	t.label[th] = name
	t.mu.Unlock()
}

// InPass implements harness.Hooks: the pass the named dispatch is running.
func (t *tool) InPass(name string) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.running[name]
	return uint64(p), ok && p >= 0
}

// Completed implements harness.Hooks.
func (t *tool) Completed(hsa.ThreadID, string) {}

// onReplay is the KERNEL_REPLAY callback. It installs replay_pass_count
// and nothing else (RPV-4), and publishes the pass for the thread.
func (t *tool) onReplay(rec replay.CallbackRecord, _ *replay.UserData) {
	p := rec.Payload
	info := p.DispatchInfo
	e := Event{What: rec.Operation.String() + "_" + rec.Phase.String(), Context: "kernel_replay", Thread: rec.Thread,
		Dispatch: info.DispatchID, Agent: info.AgentID}
	switch {
	case rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter:
		p.ReplayPassCount = t.passCount
		t.mu.Lock()
		t.labelOf[info.DispatchID] = t.label[rec.Thread]
		t.mu.Unlock()
	case rec.Operation == replay.OpPass && rec.Phase == replay.PhaseEnter:
		e.Pass, e.N = p.CurrentPass, p.TotalPasses
		t.mu.Lock()
		t.published[rec.Thread] = p.CurrentPass
		t.running[t.labelOf[info.DispatchID]] = int64(p.CurrentPass)
		t.mu.Unlock()
	case rec.Operation == replay.OpPass:
		e.Pass, e.N = p.CurrentPass, p.TotalPasses
		t.mu.Lock()
		delete(t.published, rec.Thread)
		t.running[t.labelOf[info.DispatchID]] = -1
		t.mu.Unlock()
	}
	e.Payload = payloadFields(p)
	t.event(e)
}

func payloadFields(p *replay.KernelReplayData) []string {
	var f []string
	if p.ReplayPassCount != nil {
		f = append(f, "replay_pass_count")
	}
	if p.ReplayContinue != nil {
		f = append(f, "replay_continue")
	}
	if p.ReplayStartContext != nil {
		f = append(f, "replay_start_context")
	}
	if p.ReplayStopContext != nil {
		f = append(f, "replay_stop_context")
	}
	return f
}

// passCount is replay_pass_count: the number of counter groups
// collectable on the dispatch's agent (RPV-3). An agent with none still
// runs the dispatch once.
func (t *tool) passCount(info replay.DispatchInfo, _ replay.UserData) uint64 {
	n := uint64(max(len(t.pass.AgentGroups[info.AgentID]), 1))
	t.event(Event{What: "pass_count", Context: "kernel_replay", Dispatch: info.DispatchID, Agent: info.AgentID, N: n})
	return n
}

// selectCounters runs on the submitting thread inside the pass (CB-4): it
// reads the pass the thread published and collects that group; outside a
// loop, group 0.
func (t *tool) selectCounters(th hsa.ThreadID, info replay.DispatchInfo, _ replay.CorrelationID) []string {
	groups := t.pass.AgentGroups[info.AgentID]
	t.mu.Lock()
	pass := t.published[th]
	t.mu.Unlock()
	if pass >= uint64(len(groups)) {
		return nil
	}
	return slices.Clone(groups[pass])
}

func (t *tool) onCounters(r replay.Record) {
	cr := CounterRecord{Thread: r.Thread, Dispatch: r.Dispatch, Correlation: r.Correlation,
		Start: r.Start, End: r.End, Counters: slices.Clone(r.Counters)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pass.KernelReplay {
		pass := t.published[r.Thread] // 0 for a dispatch that was not replayed
		cr.Pass = &pass
	}
	t.pass.Counters = append(t.pass.Counters, cr)
}

func (t *tool) onKernel(r replay.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pass.Kernels = append(t.pass.Kernels, KernelRecord{Thread: r.Thread, Dispatch: r.Dispatch,
		Correlation: r.Correlation, Start: r.Start, End: r.End})
}

// PassCounts is, per dispatch id, the pass count the tool returned.
func (p *Pass) PassCounts() map[uint64]uint64 {
	out := map[uint64]uint64{}
	for _, e := range p.Events {
		if e.What == "pass_count" {
			out[e.Dispatch] = e.N
		}
	}
	return out
}

// sortedAgents returns agent ids in order.
func sortedAgents(m map[hsa.AgentID][][]string) []hsa.AgentID {
	ids := make([]hsa.AgentID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
