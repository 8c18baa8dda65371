package specgen_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target/sim"
)

// features names what a generated spec may use; every one must turn up in
// a few hundred specs, or the generator has stopped exploring part of the
// format.
func features(s spec.Spec) []string {
	var out []string
	add := func(on bool, name string) {
		if on && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	add(len(s.Agents) > 1, "several agents")
	for _, a := range s.Agents {
		add(true, "agent "+a.Kind)
		add(a.SnapshotLimit > 0, "snapshot_limit")
		add(a.RestoreFailsAt > 0, "restore_fails_at")
	}
	for _, c := range s.Contexts {
		sv := c.Services
		add(sv.KernelReplay != nil && len(sv.KernelReplay.Operations) == 0, "kernel_replay all operations")
		add(sv.KernelReplay != nil && len(sv.KernelReplay.Operations) == 1, "kernel_replay one operation")
		add(sv.CounterCollection != nil, "counter_collection")
		add(sv.KernelTrace != nil, "kernel_trace")
		add(sv.DeviceCounting != nil, "device_counting")
		add(sv.PCSampling != nil, "pc_sampling")
		add(sv.SPM != nil, "spm")
		add(sv.ThreadTrace != nil, "thread_trace")
		add(sv.ExternalCorrelation != nil, "external_correlation")
		add(!c.Started(), "context not started")
		add(c.StopAfter != "", "stop_after")
	}
	plans := []spec.Plan{s.Tool.Plan}
	for _, d := range s.Application.Dispatches {
		if d.Plan != nil {
			plans = append(plans, *d.Plan)
		}
		add(true, "kernel "+d.Kernel)
		add(d.Thread > 1, "second thread")
		add(d.Queue != "", "second queue")
		add(d.Packets > 1, "multi-packet")
		add(d.KernelPackets > 1, "kernel_packets")
		add(d.Graph, "graph")
		add(d.BarriersBetween, "barriers_between")
		add(d.ByTool, "by_tool")
		add(d.After != "", "after")
		add(d.During != nil, "during")
		add(d.Grid != 0, "grid")
		add(d.Workgroup != 0, "workgroup")
	}
	for _, p := range plans {
		n, fixed := p.Passes.Number()
		add(p.Passes.Unset(), "passes none")
		add(p.Passes == spec.PassesGroups, "passes groups")
		add(fixed && n == 1, "passes 1")
		add(fixed && n > 1, "passes N")
		add(fixed && n == 0 && p.Continue == nil, "passes 0 without continue")
		add(fixed && n == 0 && p.Continue != nil, "indefinite")
		add(fixed && n == 0 && p.Continue != nil && p.Continue.Always, "never-ending")
		if c := p.Continue; c != nil {
			add(c.StopAfter != nil, "continue stop_after")
			add(c.Always, "continue always")
			add(c.Converge != nil, "continue converge")
		}
		add(len(p.Local) > 0, "local toggles")
		add(slices.ContainsFunc(p.Local, func(l spec.LocalToggle) bool { return l.Pass == -1 }), "local every pass")
		add(len(p.Collect) > 0, "collect")
		add(p.UserData != nil, "user_data")
		add(p.WriteUserDataInPass, "write_user_data_in_pass")
		add(slices.ContainsFunc(p.Actions, func(a spec.Action) bool { return a.Call != spec.ActionDispatch }), "global call from a callback")
		add(slices.ContainsFunc(p.Actions, func(a spec.Action) bool { return a.Call == spec.ActionDispatch }), "dispatch from a callback")
		add(slices.ContainsFunc(p.Actions, func(a spec.Action) bool { return a.Call == spec.ActionFree }), "free from a callback")
		add(slices.ContainsFunc(p.Actions, func(a spec.Action) bool { return a.Call == spec.ActionAlloc }), "alloc from a callback")
	}
	for _, sit := range situations(s) {
		add(true, sit)
	}
	add(len(s.Tool.Misuse) > 0, "misuse")
	add(s.Tool.ConfigureTwice, "configure_twice")
	for _, b := range s.Application.Buffers {
		kind := b.Kind
		if kind == "" {
			kind = "device"
		}
		add(true, "buffer "+kind)
		add(b.FreeAfter != "", "free_after")
		add(b.AllocAfter != "", "alloc_after")
		add(b.ByTool, "buffer by_tool")
		add(len(b.Values) > 0, "values")
	}
	return out
}

// situations names the situations of issue 20 a spec sets up, as far as
// its text shows them: loops one after another on a thread and on several
// threads at once, with local toggles; the tool's dispatches from a loop on
// its own agent and on another; a buffer freed by one thread while another
// replays.
func situations(s spec.Spec) []string {
	var out []string
	planOf := func(d spec.Dispatch) spec.Plan {
		if d.Plan != nil {
			return *d.Plan
		}
		return s.Tool.Plan
	}
	loops := func(p spec.Plan) bool {
		n, fixed := p.Passes.Number()
		return fixed && (n > 1 || n == 0 && p.Continue != nil)
	}
	toggles := false
	loopsOn := map[uint64]int{}
	for _, d := range s.Application.Dispatches {
		p := planOf(d)
		toggles = toggles || len(p.Local) > 0
		if !d.ByTool && loops(p) {
			loopsOn[max(d.Thread, spec.DefaultThread)]++
		}
	}
	if toggles {
		for _, n := range loopsOn {
			if n > 1 {
				out = append(out, "loops one after another on a thread, with local toggles")
				break
			}
		}
		if len(loopsOn) > 1 {
			out = append(out, "loops on several threads, with local toggles")
		}
	}
	byTool := map[string]string{}
	for _, d := range s.Application.Dispatches {
		if d.ByTool {
			byTool[d.Name] = d.Agent
		}
	}
	for _, d := range s.Application.Dispatches {
		p := planOf(d)
		if d.ByTool || !loops(p) {
			continue
		}
		for _, a := range p.Actions {
			if agent, ok := byTool[a.Dispatch]; ok && a.Call == spec.ActionDispatch {
				if agent == d.Agent {
					out = append(out, "a dispatch from a callback on the loop's agent")
				} else {
					out = append(out, "a dispatch from a callback on another agent")
				}
			}
		}
	}
	// A thread frees a buffer once one of its dispatches completes; another
	// thread replays meanwhile (by the simulator's order, or during a pass
	// it waits for).
	for _, b := range s.Application.Buffers {
		for _, d := range s.Application.Dispatches {
			th := max(d.Thread, spec.DefaultThread)
			if b.FreeAfter != d.Name {
				continue
			}
			for other, n := range loopsOn {
				if other != th && n > 0 {
					out = append(out, "a buffer freed by one thread while another replays")
				}
			}
		}
	}
	return out
}

func TestGeneratorReachesEveryFeature(t *testing.T) {
	all := []string{"several agents", "agent MI300", "agent MI200", "agent consumer", "snapshot_limit", "restore_fails_at",
		"kernel_replay all operations", "kernel_replay one operation", "counter_collection", "kernel_trace", "device_counting",
		"pc_sampling", "spm", "thread_trace", "external_correlation", "context not started", "stop_after",
		"second thread", "second queue", "multi-packet", "kernel_packets", "graph", "by_tool", "after", "during", "grid", "workgroup",
		"passes none", "passes groups", "passes 1", "passes N", "passes 0 without continue", "indefinite", "never-ending",
		"continue stop_after", "continue always", "continue converge", "local toggles", "local every pass", "collect",
		"user_data", "write_user_data_in_pass", "global call from a callback", "dispatch from a callback", "misuse", "configure_twice",
		"buffer device", "buffer fine", "buffer host", "buffer kernarg", "free_after", "alloc_after", "values",
		"barriers_between", "free from a callback", "alloc from a callback", "buffer by_tool",
		"loops one after another on a thread, with local toggles", "loops on several threads, with local toggles",
		"a dispatch from a callback on the loop's agent", "a dispatch from a callback on another agent",
		"a buffer freed by one thread while another replays"}
	for _, k := range spec.Kernels {
		all = append(all, "kernel "+k.Name)
	}
	seen := map[string]int{}
	const n = 400
	for seed := range n {
		for _, f := range features(specgen.Example(specgen.Config{}, seed)) {
			seen[f]++
		}
	}
	for _, f := range all {
		if seen[f] == 0 {
			t.Errorf("no spec of %d used %s", n, f)
		}
	}
	var unknown []string
	for f := range seen {
		if !slices.Contains(all, f) {
			unknown = append(unknown, f)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("features the list does not name: %v", unknown)
	}
}

// TestGeneratedSpecsExerciseTheRules: over a few hundred generated specs
// the oracles examine most rules; this lists the ones no generated spec
// exercised, and fails if that list grows past what the generator cannot
// reach by design (the API queries' misuse, the rocprofv3 front end).
func TestGeneratedSpecsExerciseTheRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 specs")
	}
	examined := map[string]bool{}
	for seed := range 200 {
		s := specgen.Example(specgen.Config{}, seed)
		r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		for _, rr := range r.Rules {
			if rr.Verdict == check.Pass || rr.Verdict == check.Fail {
				examined[rr.Rule] = true
			}
		}
	}
	var missing []string
	for _, id := range check.JudgedRules() {
		if !examined[id] {
			missing = append(missing, id)
		}
	}
	t.Logf("rules no generated spec exercised: %v", missing)
	if len(missing) > maxUnexercised {
		t.Errorf("%d rules were never exercised (at most %d expected): %v", len(missing), maxUnexercised, missing)
	}
}

// maxUnexercised is how many judged rules 200 generated specs may leave
// unexercised (see the log of TestGeneratedSpecsExerciseTheRules).
const maxUnexercised = 0
