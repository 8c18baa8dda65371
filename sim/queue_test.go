package sim

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

func TestKernelAndSignalEvents(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{}, "MI200", "MI300")
	q, err := rt.CreateQueue(2)
	if err != nil {
		t.Fatal(err)
	}
	x := buffer(t, rt, 1, 2)
	sig := rt.CreateSignal(1)
	p := dispatch("increment", 2, buf(x))
	p.Completion, p.Tag = sig, 42
	before := rt.Clock()
	if err := q.Submit(7, p); err != nil {
		t.Fatal(err)
	}
	if sig.Value() != 0 {
		t.Errorf("signal = %d, want 0", sig.Value())
	}
	got := rec.Events()
	if len(got) != 3 || got[0].Type != trace.MemWrite {
		t.Fatalf("%d events, want the buffer's fill, the kernel and the signal: %+v", len(got), got)
	}
	got = got[1:]
	k := got[0]
	want := trace.Event{Seq: 2, Type: trace.Kernel, Time: k.End, Thread: 7, Agent: 2, Queue: uint64(q.ID()),
		Dispatch: 42, Kernel: "increment", Start: k.Start, End: k.End, Signal: uint64(sig.ID()),
		// x lives on agent 1: another agent's memory is not saved by a
		// replay on agent 2, so the digests cover no buffer (decision 17.3).
		MemIn: trace.Digest(), MemOut: trace.Digest()}
	if diff := cmp.Diff(want, k); diff != "" {
		t.Errorf("kernel event (-want +got):\n%s", diff)
	}
	if !(before < k.Start && k.Start < k.End && k.End == rt.Clock()) {
		t.Errorf("times: clock before %d, start %d, end %d, clock after %d", before, k.Start, k.End, rt.Clock())
	}
	wantSig := trace.Event{Seq: 3, Type: trace.Signal, Time: k.End, Thread: 7, Signal: uint64(sig.ID()), Value: trace.I64(0)}
	if diff := cmp.Diff(wantSig, got[1]); diff != "" {
		t.Errorf("signal event (-want +got):\n%s", diff)
	}
}

func TestBarrierCompletesAtOnce(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{}, "MI300")
	q, _ := rt.CreateQueue(1)
	sig := rt.CreateSignal(1)
	if err := q.Submit(3, hsa.Packet{Type: hsa.BarrierPacket, Completion: sig}); err != nil {
		t.Fatal(err)
	}
	if sig.Value() != 0 || len(eventsOf(rec, trace.Signal)) != 1 || len(eventsOf(rec, trace.Kernel)) != 0 {
		t.Errorf("signal %d, events %+v", sig.Value(), rec.Events())
	}
	if err := q.Drain(); err != nil {
		t.Error(err)
	}
	if err := rt.DrainAgent(1); err != nil {
		t.Error(err)
	}
	if err := rt.DrainAgent(5); !errors.Is(err, hsa.ErrUnknownAgent) {
		t.Errorf("DrainAgent(5) = %v", err)
	}
}

// DID-4, RPV-8: every pass has its own times; counters are the same.
func TestProfileAcrossPasses(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300")
	q, _ := rt.CreateQueue(1)
	x := buffer(t, rt, make([]int32, 1000)...)
	counters := []string{"SQ_WAVES", "SQ_INSTS_VALU", "TCC_HIT", "GRBM_COUNT"}
	var profiles []hsa.Profile
	for range 3 {
		p := dispatch("increment", 1000, buf(x))
		p.Profile = &hsa.Profile{Counters: counters}
		if err := q.Submit(1, p); err != nil {
			t.Fatal(err)
		}
		profiles = append(profiles, *p.Profile)
	}
	for i, p := range profiles {
		if p.Start >= p.End {
			t.Errorf("pass %d: start %d >= end %d", i, p.Start, p.End)
		}
		if i > 0 && p.Start <= profiles[i-1].End {
			t.Errorf("pass %d starts at %d, before pass %d ended (%d)", i, p.Start, i-1, profiles[i-1].End)
		}
		if diff := cmp.Diff(profiles[0].Values, p.Values); diff != "" {
			t.Errorf("pass %d counters differ (-pass0 +this):\n%s", i, diff)
		}
	}
	if got := profiles[0].Values["SQ_WAVES"]; got != 16 { // ceil(1000/64) workgroups of one wave
		t.Errorf("SQ_WAVES = %d, want 16", got)
	}
}

func TestInterceptorSeesSubmissionsOnTheWritingThread(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{}, "MI300")
	q, _ := rt.CreateQueue(1)
	x := buffer(t, rt, 0)
	var threads []hsa.ThreadID
	q.SetWriteInterceptor(func(iq hsa.Queue, thread hsa.ThreadID, packets []hsa.Packet, write hsa.WriteFunc) error {
		if iq != q {
			t.Error("interceptor got another queue")
		}
		threads = append(threads, thread)
		for range 2 { // run it twice, as a replay of two passes would
			if err := write(thread, packets); err != nil {
				return err
			}
		}
		return nil
	})
	if err := q.Submit(4, dispatch("increment", 1, buf(x))); err != nil {
		t.Fatal(err)
	}
	q.SetWriteInterceptor(nil)
	if err := q.Submit(5, dispatch("increment", 1, buf(x))); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(threads, []hsa.ThreadID{4}) {
		t.Errorf("interceptor saw threads %v, want [4]", threads)
	}
	if got := readInt32s(t, rt, x)[0]; got != 3 {
		t.Errorf("x = %d, want 3 (two intercepted runs and one plain)", got)
	}
	if n := len(eventsOf(rec, trace.Kernel)); n != 3 {
		t.Errorf("%d kernel events, want 3", n)
	}
}

func TestNoRecorderEmitsNothing(t *testing.T) {
	rt, err := New(Config{Agents: []AgentConfig{{Kind: "consumer"}}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := rt.CreateQueue(1)
	x := buffer(t, rt, 1)
	sig := rt.CreateSignal(1)
	p := dispatch("increment", 1, buf(x))
	p.Completion = sig
	if err := q.Submit(1, p); err != nil || sig.Value() != 0 {
		t.Fatalf("err %v, signal %d", err, sig.Value())
	}
}

// mem_in and mem_out digest the coarse-grained buffers of the kernel's own
// agent, the memory replay saves: another agent's buffer, or fine-grained
// memory, is left out.
func TestKernelDigestsCoverItsAgentsMemory(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{}, "MI300", "MI300")
	own := buffer(t, rt, 1, 2) // agent 1
	peer, err := rt.Allocate(2, hsa.DeviceCoarse, 8)
	if err != nil {
		t.Fatal(err)
	}
	fine, err := rt.Allocate(1, hsa.DeviceFine, 8)
	if err != nil {
		t.Fatal(err)
	}
	q, err := rt.CreateQueue(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []hsa.Allocation{peer, fine} {
		if err := q.Submit(1, dispatch("increment_pair", 2, buf(own), buf(other))); err != nil {
			t.Fatal(err)
		}
	}
	var ks []trace.Event
	for _, e := range rec.Events() {
		if e.Type == trace.Kernel {
			ks = append(ks, e)
		}
	}
	want := [][2]string{
		{trace.Digest(int32s(1, 2)), trace.Digest(int32s(2, 3))},
		{trace.Digest(int32s(2, 3)), trace.Digest(int32s(3, 4))},
	}
	if len(ks) != 2 {
		t.Fatalf("%d kernel events, want 2", len(ks))
	}
	for i, k := range ks {
		if k.MemIn != want[i][0] || k.MemOut != want[i][1] {
			t.Errorf("kernel %d: mem_in %s mem_out %s, want %s %s (the own buffer only)", i, k.MemIn, k.MemOut, want[i][0], want[i][1])
		}
	}
}
