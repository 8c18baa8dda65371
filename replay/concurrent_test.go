//go:build !mutation

package replay_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
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
