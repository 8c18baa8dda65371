//go:build !mutation

package replay_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/trace"
)

// bench is a one-agent machine with one buffer of n int32 set to 5, an
// intercepted queue and an SDK, for tests that drive the engine directly.
type bench struct {
	t   testing.TB
	rt  *sim.Runtime
	sdk *replay.SDK
	rec *trace.Recorder
	q   hsa.Queue
	buf hsa.Allocation
}

func newBench(t testing.TB, opts replay.Options, setup func(b *bench)) *bench {
	t.Helper()
	return newBenchOn(t, sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}}}, opts, setup)
}

// newBenchOn is newBench on a machine of the caller's choosing (one whose
// snapshot or restore is made to fail, say).
func newBenchOn(t testing.TB, cfg sim.Config, opts replay.Options, setup func(b *bench)) *bench {
	t.Helper()
	rt, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{t: t, rt: rt}
	if opts.Recorder == nil {
		b.rec = trace.NewRecorder(rt.Clock)
		rt.SetRecorder(b.rec)
		opts.Recorder = b.rec
	}
	b.sdk = replay.New(rt, opts)
	if setup != nil {
		setup(b)
	}
	agent := rt.Agents()[0].ID
	if b.buf, err = rt.Allocate(agent, hsa.DeviceCoarse, 64*4); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64*4)
	for i := 0; i < 64; i++ {
		binary.LittleEndian.PutUint32(data[i*4:], 5)
	}
	if err := rt.Write(b.buf, 0, data); err != nil {
		t.Fatal(err)
	}
	if b.q, err = rt.CreateQueue(agent); err != nil {
		t.Fatal(err)
	}
	b.sdk.Intercept(b.q)
	return b
}

// dispatch submits one increment of the buffer and reports the signal's
// value afterwards (0: the completion fired once) and the first element.
func (b *bench) dispatch() (signal int64, first int32, err error) {
	sig := b.rt.CreateSignal(1)
	buf := b.buf
	err = b.q.Submit(1, hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment",
		Grid: hsa.Dim3{X: 64, Y: 1, Z: 1}, Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1},
		Args: []hsa.Arg{{Buffer: &buf}}, Completion: sig})
	out := make([]byte, 4)
	if rerr := b.rt.Read(b.buf, 0, out); rerr != nil {
		b.t.Fatal(rerr)
	}
	return sig.Value(), int32(binary.LittleEndian.Uint32(out)), err
}

func (b *bench) count(typ trace.Type) int {
	n := 0
	for _, e := range b.rec.Events() {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// replayTool configures KERNEL_REPLAY with a callback that installs the
// given pass count and continue functions and counts what it sees.
type replayTool struct {
	passCount replay.PassCountFunc
	cont      replay.ContinueFunc
	passes    []uint64 // current_pass of every PASS ENTER
	totals    []uint64
	configs   int
	exits     int // CONFIG EXITs
	onPass    func(rec replay.CallbackRecord, ud *replay.UserData)
}

func (rt *replayTool) install(b *bench, ops ...replay.Operation) replay.ContextID {
	ctx, _ := b.sdk.CreateContext()
	st := b.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, ops, func(rec replay.CallbackRecord, ud *replay.UserData) {
		p := rec.Payload
		switch {
		case rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter:
			rt.configs++
			p.ReplayPassCount, p.ReplayContinue = rt.passCount, rt.cont
		case rec.Operation == replay.OpConfig:
			rt.exits++
		case rec.Operation == replay.OpPass && rec.Phase == replay.PhaseEnter:
			rt.passes = append(rt.passes, p.CurrentPass)
			rt.totals = append(rt.totals, p.TotalPasses)
		}
		if rt.onPass != nil && rec.Operation == replay.OpPass {
			rt.onPass(rec, ud)
		}
	})
	if st != replay.StatusSuccess {
		b.t.Fatalf("configure: %v", st)
	}
	if st := b.sdk.StartContext(ctx); st != replay.StatusSuccess {
		b.t.Fatalf("start: %v", st)
	}
	return ctx
}

func fixed(n uint64) replay.PassCountFunc {
	return func(replay.DispatchInfo, replay.UserData) uint64 { return n }
}

func stopAfter(k uint64) replay.ContinueFunc {
	return func(_ replay.DispatchInfo, pass, _ uint64, _ replay.UserData) int {
		if pass >= k {
			return 0
		}
		return 1
	}
}

// TestPassCountTable walks the spec's pass-count table (PC-1..PC-6) and
// what follows from each row: passes run, snapshot taken, the one
// completion (CMP-1) and one run's worth of memory (MEM-3).
func TestPassCountTable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		passCount  replay.PassCountFunc
		cont       replay.ContinueFunc
		wantPasses int
		wantTotal  uint64
		snapshot   bool
		warning    bool
	}{
		{"PC-1 left null", nil, nil, 0, 0, false, false},
		{"PC-2 returns 1", fixed(1), stopAfter(0), 0, 0, false, false},
		{"PC-3 fixed N", fixed(4), nil, 4, 4, true, false},
		{"PC-4 N with early exit", fixed(5), stopAfter(1), 2, 5, true, false},
		{"PC-4 never extends", fixed(3), stopAfter(100), 3, 3, true, false},
		{"PC-5 indefinite", fixed(0), stopAfter(6), 7, 0, true, false},
		{"PC-6 zero without continue", fixed(0), nil, 0, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := &replayTool{passCount: tc.passCount, cont: tc.cont}
			b := newBench(t, replay.Options{MaxPasses: 100}, func(b *bench) { tool.install(b) })
			sig, first, err := b.dispatch()
			if err != nil {
				t.Fatal(err)
			}
			if len(tool.passes) != tc.wantPasses {
				t.Errorf("passes run = %d, want %d", len(tool.passes), tc.wantPasses)
			}
			for i, p := range tool.passes {
				if p != uint64(i) || tool.totals[i] != tc.wantTotal {
					t.Errorf("PASS %d: current_pass=%d total=%d, want %d and %d (PC-5, PC-7)", i, p, tool.totals[i], i, tc.wantTotal)
				}
			}
			if got := b.count(trace.Snapshot) > 0; got != tc.snapshot {
				t.Errorf("snapshot taken = %v, want %v (MEM-1)", got, tc.snapshot)
			}
			if got := b.count(trace.Warning) > 0; got != tc.warning {
				t.Errorf("warning = %v, want %v (PC-6)", got, tc.warning)
			}
			if sig != 0 || first != 6 {
				t.Errorf("signal=%d first=%d, want one completion (0) and one increment (6) (CMP-1, MEM-3)", sig, first)
			}
			if n := b.count(trace.DispatchID); n != 1 {
				t.Errorf("dispatch ids reserved = %d, want 1 (DID-3)", n)
			}
		})
	}
}

// TestFaultsAreVisible shows the engine's fault switches change what a
// direct observer sees, so a check that relies on them can fail.
func TestFaultsAreVisible(t *testing.T) {
	for _, tc := range []struct {
		fault replay.Fault
		bad   func(sig int64, first int32, tool *replayTool, b *bench) bool
	}{
		{replay.FaultCompletionEveryPass, func(sig int64, _ int32, _ *replayTool, _ *bench) bool { return sig != 0 }},
		{replay.FaultSkipRestore, func(_ int64, first int32, _ *replayTool, _ *bench) bool { return first != 6 }},
		{replay.FaultRestoreAfterLastPass, func(_ int64, first int32, _ *replayTool, _ *bench) bool { return first != 6 }},
		{replay.FaultDispatchIDPerPass, func(_ int64, _ int32, _ *replayTool, b *bench) bool { return b.count(trace.DispatchID) != 1 }},
		{replay.FaultIndefiniteTotalNonZero, func(_ int64, _ int32, tool *replayTool, _ *bench) bool { return tool.totals[1] != 0 }},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			tool := &replayTool{passCount: fixed(0), cont: stopAfter(2)}
			b := newBench(t, replay.Options{MaxPasses: 100, Faults: replay.Faults{tc.fault: true}}, func(b *bench) { tool.install(b) })
			sig, first, err := b.dispatch()
			if err != nil {
				t.Fatal(err)
			}
			if !tc.bad(sig, first, tool, b) {
				t.Errorf("fault %s planted but not visible", tc.fault)
			}
		})
	}
}

// TestActivation: only a started context whose subscription covers CONFIG
// replays (ACT-1..ACT-3).
func TestActivation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ops    []replay.Operation
		start  bool
		replay bool
	}{
		{"all operations", nil, true, true},
		{"CONFIG only", []replay.Operation{replay.OpConfig}, true, true},
		{"PASS only", []replay.Operation{replay.OpPass}, true, false},
		{"never started", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t, replay.Options{}, func(b *bench) {
				ctx, _ := b.sdk.CreateContext()
				b.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, tc.ops, func(rec replay.CallbackRecord, _ *replay.UserData) {
					if rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter {
						rec.Payload.ReplayPassCount = fixed(3)
					}
				})
				if tc.start {
					b.sdk.StartContext(ctx)
				}
			})
			if _, first, err := b.dispatch(); err != nil || first != 6 {
				t.Fatalf("first=%d err=%v", first, err)
			}
			if got := b.count(trace.Snapshot) > 0; got != tc.replay {
				t.Errorf("replayed = %v, want %v", got, tc.replay)
			}
		})
	}
}

// ACT-4: a queue passes the idle SDK by, and goes through it again as soon
// as a context starts, and no longer once it stops: the idle flag follows
// the started contexts.
func TestIdleSDKIsPassedByUntilAContextStarts(t *testing.T) {
	b := newBench(t, replay.Options{}, nil)
	tool := &replayTool{passCount: fixed(2)}
	for i, step := range []struct {
		start, stop bool
		passes      int // PASS ENTERs so far
	}{{passes: 0}, {start: true, passes: 2}, {stop: true, passes: 2}, {start: true, passes: 4}} {
		switch {
		case step.start && i == 1:
			tool.install(b)
		case step.start:
			b.sdk.StartContext(1)
		case step.stop:
			b.sdk.StopContext(1)
		}
		if _, _, err := b.dispatch(); err != nil {
			t.Fatal(err)
		}
		if len(tool.passes) != step.passes {
			t.Errorf("step %d: %d passes so far, want %d", i, len(tool.passes), step.passes)
		}
	}
}

// TestSecondReplayContextRefused: ACT-5.
func TestSecondReplayContextRefused(t *testing.T) {
	b := newBench(t, replay.Options{}, nil)
	cb := func(replay.CallbackRecord, *replay.UserData) {}
	a, _ := b.sdk.CreateContext()
	c, _ := b.sdk.CreateContext()
	if st := b.sdk.ConfigureCallbackTracing(a, replay.KindKernelReplay, nil, cb); st != replay.StatusSuccess {
		t.Fatal(st)
	}
	if st := b.sdk.ConfigureCallbackTracing(c, replay.KindKernelReplay, nil, cb); st != replay.StatusErrorServiceAlreadyConfigured {
		t.Errorf("second configuration: %v, want ERROR_SERVICE_ALREADY_CONFIGURED", st)
	}
}

// TestOperationQueries: API-2..API-4.
func TestOperationQueries(t *testing.T) {
	b := newBench(t, replay.Options{}, nil)
	for op, want := range map[replay.Operation]replay.Status{
		replay.OpNone: replay.StatusErrorOperationNotFound, replay.OpConfig: replay.StatusSuccess,
		replay.OpPass: replay.StatusSuccess, replay.OpLast: replay.StatusErrorOperationNotFound, 4: replay.StatusErrorOperationNotFound,
	} {
		if _, st := b.sdk.OperationName(replay.KindKernelReplay, op); st != want {
			t.Errorf("name of %d: %v, want %v", op, st, want)
		}
	}
	for name, want := range map[string]replay.Operation{"CONFIG": 1, "PASS": 2, "ROCPROFILER_KERNEL_REPLAY_PASS": 2, "SNAPSHOT": 0, "RESTORE": 0} {
		if op, _ := b.sdk.OperationID(replay.KindKernelReplay, name); op != want {
			t.Errorf("id of %s: %d, want %d", name, op, want)
		}
	}
}

// TestLocalContexts: LCX-2 (window), LCX-3 (sticky), LCX-4 (scoped),
// LCX-7 (not started: start and stop refused alike) and SVC-1/SVC-2 (who
// honours the mask; a local start ends a trace service's stop).
func TestLocalContexts(t *testing.T) {
	var counterCtx, traceCtx, idleCtx replay.ContextID
	records := map[replay.Service][]uint64{} // dispatch ids per service
	var statuses []replay.Status
	tool := &replayTool{passCount: fixed(3)}
	tool.onPass = func(rec replay.CallbackRecord, _ *replay.UserData) {
		p := rec.Payload
		if rec.Phase == replay.PhaseExit {
			statuses = append(statuses, p.ReplayStopContext(counterCtx)) // LCX-2: outside PASS ENTER
			return
		}
		switch p.CurrentPass {
		case 0:
			statuses = append(statuses, p.ReplayStopContext(counterCtx), p.ReplayStopContext(traceCtx), p.ReplayStartContext(idleCtx),
				p.ReplayStopContext(idleCtx))
		case 2:
			statuses = append(statuses, p.ReplayStartContext(counterCtx), p.ReplayStartContext(traceCtx))
		}
	}
	b := newBench(t, replay.Options{}, func(b *bench) {
		counterCtx, _ = b.sdk.CreateContext()
		b.sdk.ConfigureCounterCollection(counterCtx, func(hsa.ThreadID, replay.DispatchInfo, replay.CorrelationID) []string {
			return []string{"SQ_WAVES"}
		}, func(r replay.Record) { records[r.Service] = append(records[r.Service], r.Dispatch.DispatchID) })
		b.sdk.ConfigurePCSampling(counterCtx, 0, func(r replay.Record) { records[r.Service] = append(records[r.Service], r.Dispatch.DispatchID) })
		traceCtx, _ = b.sdk.CreateContext()
		b.sdk.ConfigureKernelTrace(traceCtx, func(r replay.Record) { records[r.Service] = append(records[r.Service], r.Dispatch.DispatchID) })
		idleCtx, _ = b.sdk.CreateContext()
		b.sdk.ConfigureKernelTrace(idleCtx, func(replay.Record) {})
		b.sdk.StartContext(counterCtx)
		b.sdk.StartContext(traceCtx)
		tool.install(b)
	})
	if _, _, err := b.dispatch(); err != nil {
		t.Fatal(err)
	}
	want := []replay.Status{replay.StatusSuccess, replay.StatusSuccess, replay.StatusErrorContextNotStarted,
		replay.StatusErrorContextNotStarted, replay.StatusErrorContextError,
		replay.StatusErrorContextError, replay.StatusSuccess, replay.StatusSuccess, replay.StatusErrorContextError}
	if len(statuses) != len(want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	for i := range want {
		if statuses[i] != want[i] {
			t.Errorf("call %d: %v, want %v", i, statuses[i], want[i])
		}
	}
	// Counters: off in passes 0 and 1, back on in pass 2 (honours stop and
	// start). Kernel trace: the same, since the start in pass 2 ends its
	// stop (SVC-1 with LCX-3, clarified 2026-11-30). PC sampling:
	// every pass (ignores toggles), except that on MI300 it cannot share a
	// pass with counters (SVC-3): so passes 0 and 1 only.
	if n := len(records[replay.CounterCollection]); n != 1 {
		t.Errorf("counter records = %d, want 1 (pass 2 only)", n)
	}
	if n := len(records[replay.KernelTrace]); n != 1 {
		t.Errorf("kernel trace records = %d, want 1 (pass 2 only)", n)
	}
	if n := len(records[replay.PCSampling]); n != 2 {
		t.Errorf("pc sampling records = %d, want 2", n)
	}
	// LCX-4: after the loop every context is as before: an unreplayed
	// dispatch is seen by both.
	tool.passCount = fixed(1)
	if _, _, err := b.dispatch(); err != nil {
		t.Fatal(err)
	}
	if n := len(records[replay.KernelTrace]); n != 2 {
		t.Errorf("kernel trace after the loop = %d records, want 2 (LCX-4)", n)
	}
	if !b.sdk.IsActive(counterCtx) || !b.sdk.IsActive(traceCtx) || b.sdk.IsActive(idleCtx) {
		t.Error("global context state changed by local toggles (LCX-5)")
	}
}

// TestNeverEndingLoopIsBounded: CMP-4 in the model, without a hang.
func TestNeverEndingLoopIsBounded(t *testing.T) {
	tool := &replayTool{passCount: fixed(0), cont: func(replay.DispatchInfo, uint64, uint64, replay.UserData) int { return 1 }}
	b := newBench(t, replay.Options{MaxPasses: 50}, func(b *bench) { tool.install(b) })
	sig, _, err := b.dispatch()
	if !errors.Is(err, replay.ErrNeverEnded) {
		t.Fatalf("err = %v, want ErrNeverEnded", err)
	}
	if sig != 1 || len(tool.passes) != 50 || b.count(trace.NeverEnded) != 1 {
		t.Errorf("signal=%d passes=%d never_ended=%d, want 1, 50, 1", sig, len(tool.passes), b.count(trace.NeverEnded))
	}
}

// TestUserDataReseeded: UD-1, UD-2.
func TestUserDataReseeded(t *testing.T) {
	var seen []uint64
	b := newBench(t, replay.Options{}, func(b *bench) {
		ctx, _ := b.sdk.CreateContext()
		b.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, func(rec replay.CallbackRecord, ud *replay.UserData) {
			switch {
			case rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter:
				ud.Value = 42
				rec.Payload.ReplayPassCount = func(_ replay.DispatchInfo, u replay.UserData) uint64 { seen = append(seen, u.Value); return 3 }
			case rec.Operation == replay.OpPass && rec.Phase == replay.PhaseEnter:
				seen = append(seen, ud.Value)
				ud.Value = 1000 + rec.Payload.CurrentPass
			}
		})
		b.sdk.StartContext(ctx)
	})
	if _, _, err := b.dispatch(); err != nil {
		t.Fatal(err)
	}
	for i, v := range seen {
		if v != 42 {
			t.Errorf("value %d seen = %d, want 42 (%v)", i, v, seen)
		}
	}
}

// TestSnapshotFailureRunsOnce: MEM-5.
func TestSnapshotFailureRunsOnce(t *testing.T) {
	tool := &replayTool{passCount: fixed(3)}
	cfg := sim.Config{Agents: []sim.AgentConfig{{Kind: "MI200"}}, FailSnapshotOver: 1}
	b := newBenchOn(t, cfg, replay.Options{}, func(b *bench) { tool.install(b) })
	sig, first, err := b.dispatch()
	if err != nil || sig != 0 || first != 6 || len(tool.passes) != 0 || b.count(trace.Warning) != 1 {
		t.Errorf("err=%v signal=%d first=%d passes=%d warnings=%d; want one plain run (one increment) and one warning",
			err, sig, first, len(tool.passes), b.count(trace.Warning))
	}
}

// TestRestoreFailureIsFatal: a restore that fails part-way stops the
// dispatch with an error and no completion, never a silent wrong result
// (MEM-5).
func TestRestoreFailureIsFatal(t *testing.T) {
	tool := &replayTool{passCount: fixed(3)}
	cfg := sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}}, FailRestoreAt: 1}
	b := newBenchOn(t, cfg, replay.Options{}, func(b *bench) { tool.install(b) })
	sig, _, err := b.dispatch()
	if !errors.Is(err, replay.ErrRestoreFailed) || sig != 1 {
		t.Errorf("err=%v signal=%d; want ErrRestoreFailed and no completion", err, sig)
	}
	// The SDK claims no restore it did not finish, the runtime shows what
	// it wrote before failing, and no CONFIG EXIT follows.
	if b.count(trace.Restore) != 0 || b.count(trace.MemWrite) == 0 || tool.exits != 0 {
		t.Errorf("restores claimed=%d runtime writes=%d CONFIG EXITs=%d; want 0, some, 0",
			b.count(trace.Restore), b.count(trace.MemWrite), tool.exits)
	}
}

// TestDispatchFromInsideACallback: the tool writes a dispatch of its own
// from PASS ENTER of pass 1, on the agent its loop holds. It is a candidate
// like any other (MEM-6, clarified 2026-12-01): CONFIG of its own, its own
// dispatch id, the tool's pass count (3); the SDK declines it with a
// reentrant_dispatch diagnostic, and it runs once at once without waiting
// for the loop's lock; the loop's local override (counters stopped in pass
// 0) does not mask it (LCX-6).
func TestDispatchFromInsideACallback(t *testing.T) {
	var counterCtx replay.ContextID
	var side hsa.Allocation
	type rec struct {
		dispatch uint64
		service  replay.Service
	}
	var records []rec
	var nestedErr error
	var nestedSignal int64 = -1
	tool := &replayTool{passCount: fixed(3)}
	var b *bench
	tool.onPass = func(r replay.CallbackRecord, _ *replay.UserData) {
		p := r.Payload
		if r.Phase != replay.PhaseEnter {
			return
		}
		switch p.CurrentPass {
		case 0:
			p.ReplayStopContext(counterCtx)
		case 1:
			sig := b.rt.CreateSignal(1)
			nestedErr = b.q.Submit(1, hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment",
				Grid: hsa.Dim3{X: 4, Y: 1, Z: 1}, Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1},
				Args: []hsa.Arg{{Buffer: &side}}, Completion: sig})
			nestedSignal = sig.Value()
		}
	}
	b = newBench(t, replay.Options{}, func(b *bench) {
		counterCtx, _ = b.sdk.CreateContext()
		b.sdk.ConfigureCounterCollection(counterCtx, func(hsa.ThreadID, replay.DispatchInfo, replay.CorrelationID) []string {
			return []string{"SQ_WAVES"}
		}, func(r replay.Record) { records = append(records, rec{r.Dispatch.DispatchID, r.Service}) })
		b.sdk.StartContext(counterCtx)
		tool.install(b)
		var err error
		if side, err = b.rt.Allocate(b.rt.Agents()[0].ID, hsa.DeviceCoarse, 16); err != nil {
			t.Fatal(err)
		}
	})
	sig, _, err := b.dispatch()
	if err != nil || nestedErr != nil {
		t.Fatalf("err=%v, nested err=%v", err, nestedErr)
	}
	if sig != 0 || nestedSignal != 0 {
		t.Errorf("signals: loop %d, nested %d; want both completed once (0)", sig, nestedSignal)
	}
	if tool.configs != 2 || tool.exits != 2 || len(tool.passes) != 3 {
		t.Errorf("CONFIG ENTERs=%d, EXITs=%d, passes=%d; want 2, 2 and 3 (the nested dispatch is a candidate, declined)", tool.configs, tool.exits, len(tool.passes))
	}
	warned := 0
	for _, e := range b.rec.Events() {
		if e.Type == trace.Warning && e.Code == trace.WarnReentrantDispatch && e.Dispatch == 2 {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d reentrant_dispatch warnings for dispatch 2, want 1", warned)
	}
	ids := 0
	for _, e := range b.rec.Events() {
		if e.Type == trace.DispatchID {
			ids++
		}
	}
	nested := 0
	for _, r := range records {
		if r.dispatch == 2 && r.service == replay.CounterCollection {
			nested++
		}
		if r.dispatch == 1 {
			t.Errorf("the loop's dispatch got a counter record although its context was stopped in pass 0")
		}
	}
	if ids != 2 || nested != 1 {
		t.Errorf("dispatch ids reserved=%d, counter records of the nested dispatch=%d; want 2 and 1", ids, nested)
	}
}

// TestPassPayloadFresh: what a tool writes into a PASS payload is gone in
// the next pass (API-5, API-6): the loop fills one payload in place each
// pass, and must fill every member. The tool scribbles on every member in
// each PASS EXIT; every PASS ENTER must still see the SDK's values.
func TestPassPayloadFresh(t *testing.T) {
	type seen struct {
		size, pass, total uint64
		grid              uint32
		passCount, cont   bool
		start, stop       bool
	}
	var got []seen
	tool := &replayTool{passCount: fixed(3)}
	tool.onPass = func(rec replay.CallbackRecord, _ *replay.UserData) {
		p := rec.Payload
		if rec.Phase == replay.PhaseEnter {
			got = append(got, seen{p.Size, p.CurrentPass, p.TotalPasses, p.DispatchInfo.GridSize.X,
				p.ReplayPassCount != nil, p.ReplayContinue != nil, p.ReplayStartContext != nil, p.ReplayStopContext != nil})
			return
		}
		*p = replay.KernelReplayData{Size: 1, CurrentPass: 99, TotalPasses: 99, ReplayPassCount: fixed(7),
			ReplayContinue: stopAfter(0)}
		p.DispatchInfo.GridSize.X = 1
	}
	b := newBench(t, replay.Options{}, func(b *bench) { tool.install(b) })
	if _, _, err := b.dispatch(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d PASS ENTERs, want 3", len(got))
	}
	for i, s := range got {
		want := seen{got[0].size, uint64(i), 3, 64, false, false, true, true}
		if s != want {
			t.Errorf("PASS ENTER %d saw %+v, want %+v", i, s, want)
		}
	}
}

// The operations' and services' names, looked up by value in arrays: each
// constant its own name (API-3: LAST included), and a value past the
// enums no name of another.
func TestOperationAndServiceNames(t *testing.T) {
	ops := map[replay.Operation]string{replay.OpNone: string(trace.OpNone), replay.OpConfig: string(trace.OpConfig),
		replay.OpPass: string(trace.OpPass), replay.OpLast: string(trace.OpLast), replay.OpLast + 1: "INVALID", 1 << 31: "INVALID"}
	for op, want := range ops {
		if got := op.String(); got != want {
			t.Errorf("Operation(%d) = %q, want %q", op, got, want)
		}
	}
	svcs := map[replay.Service]trace.Service{replay.CounterCollection: trace.CounterCollection, replay.KernelTrace: trace.KernelTrace,
		replay.DeviceCounting: trace.DeviceCounting, replay.PCSampling: trace.PCSampling, replay.SPM: trace.SPM,
		replay.ThreadTrace: trace.ThreadTrace, 0: "", replay.ThreadTrace + 1: "", -1: ""}
	for s, want := range svcs {
		if got := s.Trace(); got != want || s.String() != string(want) {
			t.Errorf("Service(%d) = %q (%q), want %q", s, got, s.String(), want)
		}
	}
}
