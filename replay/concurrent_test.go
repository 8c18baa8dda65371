//go:build !mutation

package replay_test

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/trace"
)

// gatedQueue passes its writes on, but holds one thread's write at the
// hardware's door (after the SDK decided how to write it) until released.
type gatedQueue struct {
	hsa.Queue
	thread           hsa.ThreadID
	reached, release chan struct{}
}

func (g *gatedQueue) SetWriteInterceptor(w hsa.WriteInterceptor) {
	g.Queue.SetWriteInterceptor(func(q hsa.Queue, thread hsa.ThreadID, packets []hsa.Packet, write hsa.WriteFunc) error {
		return w(q, thread, packets, func(th hsa.ThreadID, ps []hsa.Packet) error {
			if th == g.thread {
				close(g.reached)
				<-g.release
			}
			return write(th, ps)
		})
	})
}

// TestWriteWithNothingStartedWaitsForALoop: found under free threads
// (decision 18.2). The write interceptor's "nothing started" fast path
// looked at whether a loop was running and then wrote without holding
// anything: a loop that began between the look and the write snapshotted
// the agent, the write ran inside the loop, and the loop's next restore
// undid it (MEM-6, a lost write). Here thread 1's tool stops its context
// globally from CONFIG ENTER (the loop keeps it, decision 12), thread 2
// writes to the loop's agent and finds nothing started, and its write is
// held at the hardware's door until after the loop could have begun.
func TestWriteWithNothingStartedWaitsForALoop(t *testing.T) {
	var (
		gate         *gatedQueue
		inner        hsa.Queue
		intruderErr  error
		intruderDone = make(chan error, 1)
		waited       bool
		intruded     bool
	)
	intrude := func(buf hsa.Allocation) {
		intruderDone <- inner.Submit(2, hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment",
			Grid: hsa.Dim3{X: 64, Y: 1, Z: 1}, Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1}, Args: []hsa.Arg{{Buffer: &buf}}})
	}
	b := newBench(t, replay.Options{}, func(b *bench) {
		ctx, _ := b.sdk.CreateContext()
		st := b.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, func(rec replay.CallbackRecord, _ *replay.UserData) {
			switch {
			case rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter:
				rec.Payload.ReplayPassCount = fixed(3)
				b.sdk.StopContext(ctx)
				go intrude(b.buf)
				<-gate.reached
				time.AfterFunc(20*time.Millisecond, func() { close(gate.release) })
			case rec.Operation == replay.OpPass && rec.Phase == replay.PhaseEnter && !waited:
				// Give a write that slipped past the loop's lock every
				// chance to land inside the loop (it must not be able to).
				waited = true
				select {
				case intruderErr = <-intruderDone:
					intruded = true
				case <-time.After(2 * time.Second):
				}
			}
		})
		if st != replay.StatusSuccess {
			t.Fatalf("configure: %v", st)
		}
		if st := b.sdk.StartContext(ctx); st != replay.StatusSuccess {
			t.Fatalf("start: %v", st)
		}
	})
	var err error
	if inner, err = b.rt.CreateQueue(b.rt.Agents()[0].ID); err != nil {
		t.Fatal(err)
	}
	gate = &gatedQueue{Queue: inner, thread: 2, reached: make(chan struct{}), release: make(chan struct{})}
	b.sdk.Intercept(gate)
	sig, _, err := b.dispatch()
	if err != nil || sig != 0 {
		t.Fatalf("loop: signal %d, err %v", sig, err)
	}
	if !intruded {
		intruderErr = <-intruderDone
	}
	if intruderErr != nil {
		t.Fatal(intruderErr)
	}
	out := make([]byte, 4)
	if err := b.rt.Read(b.buf, 0, out); err != nil {
		t.Fatal(err)
	}
	// 5, one increment by the loop (MEM-3), one by the other write.
	if got := int32(binary.LittleEndian.Uint32(out)); got != 7 {
		t.Errorf("buffer holds %d after the loop and the other thread's increment, want 7: a write ran inside the loop and its restore undid it (MEM-6)", got)
	}
}

// intruding is the simulator, letting another thread's kernel run the
// moment a snapshot's copy or a restore's writes are done and the runtime
// lets go of its memory: where the Go scheduler once paused a loop's
// thread for 60 dispatches of another (decision 18.8).
type intruding struct {
	*sim.Runtime
	intrude func()
}

func (r *intruding) Snapshot(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation) (hsa.Snapshot, error) {
	return r.SnapshotWithHook(thread, agent, regions, nil)
}

func (r *intruding) SnapshotWithHook(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation, saved func(uint64)) (hsa.Snapshot, error) {
	return r.SnapshotListed(thread, agent, func() []hsa.Allocation { return regions }, saved)
}

// SnapshotListed is the simulator's (decision 18.9), which the SDK prefers:
// it intrudes there too.
func (r *intruding) SnapshotListed(thread hsa.ThreadID, agent hsa.AgentID, list func() []hsa.Allocation, saved func(uint64)) (hsa.Snapshot, error) {
	s, err := r.Runtime.SnapshotListed(thread, agent, list, saved)
	r.intrude()
	if err != nil {
		return nil, err
	}
	return intrudingSnapshot{s, r.intrude}, nil
}

type intrudingSnapshot struct {
	hsa.Snapshot
	intrude func()
}

func (s intrudingSnapshot) Restore() (uint64, error) { return s.RestoreWithHook(nil) }

func (s intrudingSnapshot) RestoreWithHook(restored func(uint64)) (uint64, error) {
	defer s.intrude()
	return s.Snapshot.(hsa.RestoreHook).RestoreWithHook(restored)
}

// TestSnapshotAndRestoreRecordedWithTheirCopy: found under free threads
// (decision 18.8). The SDK recorded its snapshot after the runtime's copy
// returned, so another thread's kernel could be recorded between the copy
// and the snapshot event; a kernel of another agent writing the loop's
// buffer (peer access) then seemed to run after the snapshot, yet pass 0
// started from memory the restores did not give back, and MEM-2 and MEM-3
// failed a correct engine (9 in 1,500 free-thread runs of a loop beside a
// thread of peer writes). Every snapshot and restore the SDK records must
// follow the runtime's own read or write of that copy directly.
func TestSnapshotAndRestoreRecordedWithTheirCopy(t *testing.T) {
	base, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}, {Kind: "MI300"}}})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(base.Clock)
	base.SetRecorder(rec)
	other := base.Agents()[1].ID
	peer, err := base.CreateQueue(other) // not intercepted: another thread's kernel, as the runtime runs it
	if err != nil {
		t.Fatal(err)
	}
	rt := &intruding{Runtime: base}
	sdk := replay.New(rt, replay.Options{Recorder: rec})
	ctx, _ := sdk.CreateContext()
	sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, func(r replay.CallbackRecord, _ *replay.UserData) {
		if r.Operation == replay.OpConfig && r.Phase == replay.PhaseEnter {
			r.Payload.ReplayPassCount = fixed(3)
		}
	})
	sdk.StartContext(ctx)
	agent := base.Agents()[0].ID
	buf, err := base.Allocate(agent, hsa.DeviceCoarse, 256)
	if err != nil {
		t.Fatal(err)
	}
	intrusions := 0
	rt.intrude = func() {
		intrusions++
		b := buf
		done := make(chan error)
		go func() { // another thread: it must not run on this goroutine's stack of locks
			done <- peer.Submit(2, hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment",
				Grid: hsa.Dim3{X: 64, Y: 1, Z: 1}, Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1}, Args: []hsa.Arg{{Buffer: &b}}})
		}()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	q, err := base.CreateQueue(agent)
	if err != nil {
		t.Fatal(err)
	}
	sdk.Intercept(q)
	if err := q.Submit(1, hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment",
		Grid: hsa.Dim3{X: 64, Y: 1, Z: 1}, Workgroup: hsa.Dim3{X: 64, Y: 1, Z: 1}, Args: []hsa.Arg{{Buffer: &buf}}}); err != nil {
		t.Fatal(err)
	}
	evs := rec.Events()
	checked := 0
	for i, e := range evs {
		want := map[trace.Type]trace.Type{trace.Snapshot: trace.MemRead, trace.Restore: trace.MemWrite}[e.Type]
		if want == "" {
			continue
		}
		checked++
		if i == 0 || evs[i-1].Type != want || evs[i-1].Thread != e.Thread {
			prev := "nothing"
			if i > 0 {
				prev = fmt.Sprintf("%s of thread %d", evs[i-1].Type, evs[i-1].Thread)
			}
			t.Errorf("the %s of thread %d is not recorded with its copy: the event before it is %s, want the runtime's %s of that thread", e.Type, e.Thread, prev, want)
		}
	}
	if checked != 3 || intrusions != 3 {
		t.Errorf("want 1 snapshot and 2 restores, each followed by another thread's kernel; found %d of them, %d kernels", checked, intrusions)
	}
}
