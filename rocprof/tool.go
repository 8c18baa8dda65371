package rocprof

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/internal/harness"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Groups is what the tool collects on one agent: every counter group (a
// set, as the tool library reads it) without the counters the agent lacks,
// split by the agent's counter registers (hsa.CounterGroups) when it does
// not fit one hardware pass, empty groups dropped, in order. Under kernel
// replay pass i collects group i and the pass count is len(Groups) (RPV-3,
// AGT-1), so one --pmc list can need a different number of passes on
// agents of different kinds.
func Groups(a hsa.Agent, groups [][]string) ([][]string, error) {
	var out [][]string
	for _, g := range groups {
		have, _ := hsa.CollectableCounters(a, counterSet(g))
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
	// Pass is the replay pass the thread had published when the record
	// arrived: 0 for a dispatch that was not replayed (RPV-6).
	Pass uint64
}

// KernelRecord is one kernel dispatch trace record (one per pass under
// kernel replay).
type KernelRecord struct {
	Thread      hsa.ThreadID
	Dispatch    replay.DispatchInfo
	Correlation replay.CorrelationID
	Start, End  uint64
}

// AppRun is one run of the application and what it produced. Kernel replay
// and a single group make one; application replay makes one per group.
type AppRun struct {
	Config Config
	Agents []hsa.Agent
	// AgentGroups is Groups for every agent.
	AgentGroups map[hsa.AgentID][][]string
	Counters    []CounterRecord
	Kernels     []KernelRecord
	// InitTime and FiniTime are the virtual clock at start and end.
	InitTime, FiniTime uint64
	// Trace is the run's trace: what the SDK, the simulator and the
	// application recorded, and what the tool did (api, callback,
	// pass_count and record events, source "tool"), as docs/trace.md
	// describes for any tool.
	Trace []trace.Event
	// Published is the per-thread pass state left at the end of the run
	// (empty when every PASS EXIT cleared it, RPV-4).
	Published map[hsa.ThreadID]uint64
}

// Result is a whole profiling session.
type Result struct {
	Plan *Plan
	Spec spec.Spec
	Runs []*AppRun
	// Warnings say where the spec's application had to be read for these
	// runs (a dispatch meant to start during a pass the run does not have).
	Warnings []string
}

// Run profiles s's application (buffers and dispatches; its contexts and
// tool plan are ignored) once per run of the plan, as rocprofv3 would. A
// counter or group the machine cannot collect is a *Diagnostic.
func Run(p *Plan, s spec.Spec) (*Result, error) {
	s = spec.Defaults(s)
	agents, err := machineAgents(s)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, cfg := range p.Runs {
		errs = append(errs, checkCounters(cfg, s, agents))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res := &Result{Plan: p, Spec: s}
	for _, cfg := range p.Runs {
		sRun, ws := startsDuringPasses(s, cfg, agents)
		for _, w := range ws {
			if !slices.Contains(res.Warnings, w) {
				res.Warnings = append(res.Warnings, w)
			}
		}
		r, err := runOnce(sRun, cfg)
		if r != nil {
			res.Runs = append(res.Runs, r)
		}
		if err != nil {
			if len(p.Runs) > 1 {
				err = fmt.Errorf("%s: %w", cfg.Dir, err)
			}
			return res, err
		}
	}
	return res, nil
}

// startsDuringPasses reads a spec's "during" under a run's passes. A
// dispatch that starts while another is in pass P waits for that pass; a
// run that does not replay the other dispatch that often (no kernel
// replay, one counter group, or fewer groups on its agent) never has it, so the
// dispatch starts once the other has completed instead, and a warning says
// so.
func startsDuringPasses(s spec.Spec, cfg Config, agents []hsa.Agent) (spec.Spec, []string) {
	agentOf := map[string]hsa.AgentID{}
	for i, a := range s.Agents {
		if i < len(agents) {
			agentOf[a.Name] = agents[i].ID
		}
	}
	passesOf := func(dispatch string) int {
		if !cfg.KernelReplay {
			return 0
		}
		for _, d := range s.Application.Dispatches {
			if d.Name == dispatch {
				for _, a := range agents {
					if a.ID == agentOf[d.Agent] {
						if g, _ := Groups(a, cfg.Groups); len(g) > 1 {
							return len(g)
						}
						return 0 // one group: the dispatch runs once, no pass to start during
					}
				}
			}
		}
		return 0
	}
	var warnings []string
	out := s
	out.Application.Dispatches = slices.Clone(s.Application.Dispatches)
	for i, d := range out.Application.Dispatches {
		if d.During == nil {
			continue
		}
		if n := passesOf(d.During.Dispatch); uint64(n) <= d.During.Pass {
			warnings = append(warnings, fmt.Sprintf("dispatch %s of spec %s starts during pass %d of %s, which this run does not have (%d pass(es)): it starts once %s has completed",
				d.Name, s.Name, d.During.Pass, d.During.Dispatch, n, d.During.Dispatch))
			d.After, d.During = d.During.Dispatch, nil
			out.Application.Dispatches[i] = d
		}
	}
	return out, warnings
}

func simConfig(s spec.Spec) sim.Config {
	cfg := sim.Config{Scheduled: true}
	for _, a := range s.Agents {
		cfg.Agents = append(cfg.Agents, sim.AgentConfig{Kind: a.Kind}) // product names, as rocprofv3 reports
		if a.SnapshotLimit > 0 && (cfg.FailSnapshotOver == 0 || a.SnapshotLimit < cfg.FailSnapshotOver) {
			cfg.FailSnapshotOver = a.SnapshotLimit // MEM-5: a snapshot that cannot be completed
		}
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
func checkCounters(cfg Config, s spec.Spec, agents []hsa.Agent) error {
	var errs []error
	seen := map[string]bool{}
	for _, g := range cfg.Groups {
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
	if len(errs) > 0 || cfg.KernelReplay {
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
		for gi, g := range cfg.Groups {
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
func runOnce(s spec.Spec, cfg Config) (*AppRun, error) {
	rt, err := sim.New(simConfig(s))
	if err != nil {
		return nil, &Diagnostic{Msg: err.Error()}
	}
	rec := trace.NewRecorder(rt.Clock)
	rt.SetRecorder(rec)
	agents := rt.Agents()
	for i, ag := range s.Agents { // as harness.Run lists them, for trace readers
		if i < len(agents) {
			rec.Emit(trace.Event{Type: trace.AgentInfo, Agent: uint64(agents[i].ID), Label: ag.Name,
				Family: agents[i].Family, Product: agents[i].Name, Arch: agents[i].Arch})
		}
	}
	sdk := replay.New(rt, replay.Options{Recorder: rec, MaxPasses: s.Limits.MaxPasses})
	r := &AppRun{Config: cfg, Agents: agents, AgentGroups: map[hsa.AgentID][][]string{}}
	for _, a := range r.Agents {
		g, err := Groups(a, cfg.Groups)
		if err != nil {
			return nil, &Diagnostic{Msg: err.Error()}
		}
		r.AgentGroups[a.ID] = g
	}
	t := &tool{sdk: sdk, rec: rec, run: r, filter: newKernelFilter(cfg), published: map[hsa.ThreadID]uint64{},
		label: map[hsa.ThreadID]string{}, labelOf: map[uint64]string{}, running: map[string]int64{}}
	if err := t.setUp(len(cfg.Groups) > 0, cfg.KernelTrace(), cfg.KernelReplay); err != nil {
		return nil, err
	}
	r.InitTime = rt.Clock()
	runErr := harness.RunApplication(rt, rt, sdk, rec, s, t)
	r.FiniTime = rt.Clock()
	r.Trace = rec.Events()
	t.mu.Lock()
	r.Published = maps.Clone(t.published)
	t.mu.Unlock()
	return r, errors.Join(runErr, errors.Join(rt.Faults()...))
}

// tool is the rocprofv3 tool library: contexts, the replay callback and
// the record callbacks. What it does goes into the run's trace as any
// tool's events do (docs/trace.md), not into a stream of its own.
type tool struct {
	sdk    *replay.SDK
	rec    *trace.Recorder
	run    *AppRun
	filter *kernelFilter

	mu        sync.Mutex
	published map[hsa.ThreadID]uint64 // per-thread pass state (RPV-4, CB-4)
	label     map[hsa.ThreadID]string // spec dispatch each thread is submitting
	labelOf   map[uint64]string       // dispatch id -> spec dispatch
	running   map[string]int64        // spec dispatch -> pass running
}

// Context roles, the label of the tool's api events.
const (
	roleCounters     = "counters"
	roleKernelReplay = "kernel_replay"
)

func (t *tool) api(e trace.Event, ctx replay.ContextID, st replay.Status) error {
	e.Type, e.Context, e.Status = trace.API, uint64(ctx), st.Trace()
	t.rec.Emit(e)
	if st == replay.StatusSuccess {
		return nil
	}
	return fmt.Errorf("rocprof tool: %s (%s context): %s", e.Call, e.Label, st)
}

// setUp creates the tool's contexts as rocprofv3's tool library does: one
// for counter collection (and kernel dispatch tracing), and the kernel
// replay context only under the flag (RPV-2).
func (t *tool) setUp(counters, kernelTrace, kernelReplay bool) error {
	var started []replay.ContextID
	var labels []string
	if counters || kernelTrace {
		ctx, st := t.sdk.CreateContext()
		if err := t.api(trace.Event{Call: trace.CallCreateContext, Label: roleCounters}, ctx, st); err != nil {
			return err
		}
		if counters {
			st := t.sdk.ConfigureCounterCollection(ctx, t.selectCounters, t.onRecord)
			if err := t.api(trace.Event{Call: trace.CallConfigureCounters, Label: roleCounters}, ctx, st); err != nil {
				return err
			}
		}
		if kernelTrace {
			st := t.sdk.ConfigureKernelTrace(ctx, t.onRecord)
			if err := t.api(trace.Event{Call: trace.CallConfigureKernelTrace, Label: roleCounters}, ctx, st); err != nil {
				return err
			}
		}
		started, labels = append(started, ctx), append(labels, roleCounters)
	}
	if kernelReplay {
		ctx, st := t.sdk.CreateContext()
		if err := t.api(trace.Event{Call: trace.CallCreateContext, Label: roleKernelReplay}, ctx, st); err != nil {
			return err
		}
		st = t.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, t.onReplay)
		if err := t.api(trace.Event{Call: trace.CallConfigureCallback, Label: roleKernelReplay, Domain: trace.DomainKernelReplay}, ctx, st); err != nil {
			return err
		}
		started, labels = append(started, ctx), append(labels, roleKernelReplay)
	}
	for i, ctx := range started {
		if err := t.api(trace.Event{Call: trace.CallStartContext, Label: labels[i]}, ctx, t.sdk.StartContext(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// ThreadStarted implements harness.Hooks.
func (t *tool) ThreadStarted(hsa.ThreadID) {}

// Submitting implements harness.Hooks: the spec dispatch a thread is
// about to submit, so that the tool's events carry its name.
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
// and nothing else (RPV-4), and publishes the pass for the thread. The
// callback event shows the payload as the SDK handed it over, the
// callback_return event as the tool left it.
func (t *tool) onReplay(rec replay.CallbackRecord, ud *replay.UserData) {
	p := rec.Payload
	info := p.DispatchInfo
	t.mu.Lock()
	if rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter {
		t.labelOf[info.DispatchID] = t.label[rec.Thread]
	}
	label := t.labelOf[info.DispatchID]
	t.mu.Unlock()
	op, phase := trace.Op(rec.Operation.String()), trace.Phase(rec.Phase.String())
	t.rec.Emit(trace.Event{Type: trace.Callback, Thread: uint64(rec.Thread), Context: uint64(rec.Context),
		Op: op, Phase: phase, Dispatch: info.DispatchID,
		Agent: uint64(info.AgentID), Queue: uint64(info.QueueID), Kernel: info.KernelName,
		Pass: trace.U64(p.CurrentPass), Total: trace.U64(p.TotalPasses), Corr: harness.Corr(rec.Correlation),
		UserData: trace.U64(ud.Value), Payload: harness.PayloadMembers(p), PayloadSize: trace.U64(p.Size),
		Info: harness.DispatchInfo(info), Label: label})
	// What the tool leaves behind (RPV-4: replay_pass_count and nothing
	// else) is recorded when it returns.
	defer func() {
		t.rec.Emit(trace.Event{Type: trace.Returned, Thread: uint64(rec.Thread), Context: uint64(rec.Context),
			Op: op, Phase: phase, Dispatch: info.DispatchID, Pass: trace.U64(p.CurrentPass),
			UserData: trace.U64(ud.Value), Payload: harness.PayloadMembers(p), Label: label})
	}()
	switch {
	case rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter:
		p.ReplayPassCount = t.passCount(rec.Thread)
	case rec.Operation == replay.OpPass && rec.Phase == replay.PhaseEnter:
		t.mu.Lock()
		t.published[rec.Thread] = p.CurrentPass
		t.running[label] = int64(p.CurrentPass)
		t.mu.Unlock()
	case rec.Operation == replay.OpPass:
		t.mu.Lock()
		delete(t.published, rec.Thread)
		t.running[label] = -1
		t.mu.Unlock()
	}
}

// passCount is replay_pass_count: the number of counter groups
// collectable on the dispatch's agent (RPV-3). A dispatch the kernel
// filters leave out, or on an agent with no collectable group, runs once.
func (t *tool) passCount(th hsa.ThreadID) replay.PassCountFunc {
	return func(info replay.DispatchInfo, ud replay.UserData) uint64 {
		n := uint64(1)
		if t.filter.targets(info.DispatchID, info.KernelName) {
			n = uint64(max(len(t.run.AgentGroups[info.AgentID]), 1))
		}
		t.rec.Emit(trace.Event{Type: trace.PassCount, Thread: uint64(th), Dispatch: info.DispatchID,
			Agent: uint64(info.AgentID), UserData: trace.U64(ud.Value), Result: trace.I64(int64(n))})
		return n
	}
}

// selectCounters runs on the submitting thread inside the pass (CB-4): it
// reads the pass the thread published and collects that group; outside a
// loop, group 0. A dispatch the kernel filters leave out collects nothing.
func (t *tool) selectCounters(th hsa.ThreadID, info replay.DispatchInfo, _ replay.CorrelationID) []string {
	if !t.filter.targets(info.DispatchID, info.KernelName) {
		return nil
	}
	groups := t.run.AgentGroups[info.AgentID]
	t.mu.Lock()
	pass := t.published[th]
	t.mu.Unlock()
	if pass >= uint64(len(groups)) {
		return nil
	}
	return slices.Clone(groups[pass])
}

// onRecord keeps a counter or kernel dispatch record for the output and
// puts it in the trace.
func (t *tool) onRecord(r replay.Record) {
	t.mu.Lock()
	pass, inLoop := t.published[r.Thread]
	switch r.Service {
	case replay.CounterCollection:
		t.run.Counters = append(t.run.Counters, CounterRecord{Thread: r.Thread, Dispatch: r.Dispatch,
			Correlation: r.Correlation, Start: r.Start, End: r.End, Counters: slices.Clone(r.Counters), Pass: pass})
	case replay.KernelTrace:
		t.run.Kernels = append(t.run.Kernels, KernelRecord{Thread: r.Thread, Dispatch: r.Dispatch,
			Correlation: r.Correlation, Start: r.Start, End: r.End})
	}
	t.mu.Unlock()
	var at *uint64
	if inLoop {
		at = trace.U64(pass)
	}
	t.rec.Emit(harness.RecordEvent(r, r.Thread, at))
}

// PassCounts is, per dispatch id, the pass count the tool returned (from
// the run's pass_count events).
func (r *AppRun) PassCounts() map[uint64]uint64 {
	out := map[uint64]uint64{}
	for _, e := range r.Trace {
		if e.Type == trace.PassCount && e.Result != nil {
			out[e.Dispatch] = uint64(*e.Result)
		}
	}
	return out
}

// TraceOf returns the run's trace with a header, for the checks that read
// traces (check.Expectations, check.Trace).
func (r *AppRun) TraceOf(specName string) trace.Trace {
	return trace.Trace{Header: trace.Header{Trace: trace.Version, Digest: trace.DigestXXH3, Spec: specName, Target: "sim", Implementation: "replayspec prof",
		Sources: trace.AllSources}, Events: r.Trace}
}
