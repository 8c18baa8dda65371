package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// Every kernel event's digests equal trace.Digest of the bytes before and
// after it, whatever mix of kernels, writes, snapshots, restores (whole,
// failed part-way, or skipped) and aliased arguments came before: the
// memo may only save work, never change a value.
func TestMemoizedDigestsAreTheDigestOfTheBytes(t *testing.T) {
	if n, m := reflect.TypeFor[runKey]().NumField(), reflect.TypeFor[contents]().NumField(); n != 5 || m != 2 {
		t.Fatalf("runKey has %d fields, contents %d: memo.ran and contents.same compare 5 and 2 one by one; compare the new ones too", n, m)
	}
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 7))
		rt, rec := newTestRuntime(t, Config{FailRestoreAt: 1 + r.IntN(40), RestoreAll: seed%3 == 0}, "MI300")
		q, _ := rt.CreateQueue(1)
		x := buffer(t, rt, 1, 2, 3, 4, 5, 6, 7, 8)
		y := buffer(t, rt, 10, 20, 30)
		fine, err := rt.Allocate(1, hsa.DeviceFine, 16)
		if err != nil {
			t.Fatal(err)
		}
		bufs := []hsa.Allocation{x, y, fine}
		var snap hsa.Snapshot
		for step := range 200 {
			switch op := r.IntN(10); {
			case op == 0:
				a := bufs[r.IntN(2)]
				if err := rt.Write(a, 0, int32s(int32(r.IntN(3)))); err != nil {
					t.Fatal(err)
				}
			case op == 1:
				if snap != nil {
					snap.Release()
				}
				snap, err = rt.Snapshot(0, 1, []hsa.Allocation{x, y})
				if err != nil {
					t.Fatal(err)
				}
			case op <= 4 && snap != nil:
				_, _ = snap.Restore() // an injected failure leaves part restored
			default:
				a, b := bufs[r.IntN(3)], bufs[r.IntN(3)]
				var p hsa.Packet
				switch r.IntN(5) {
				case 0:
					p = dispatch("increment", uint32(1+r.IntN(8)), buf(a))
				case 1:
					p = dispatch("accumulate", 8, buf(a), buf(b))
				case 2:
					p = dispatch("increment_pair", uint32(1+r.IntN(3)), buf(a), buf(b))
				case 3:
					p = dispatch("fill", 4, buf(a), scalar(int32(r.IntN(2))))
				default:
					// Past the buffer's end too: equal items, another grid.
					p = dispatch("atomic_counter", uint32(r.IntN(12)), buf(a))
				}
				before := saved(t, rt, p)
				if err := q.Submit(1, p); err != nil {
					t.Fatal(err)
				}
				after := saved(t, rt, p)
				ks := eventsOf(rec, trace.Kernel)
				k := ks[len(ks)-1]
				if k.MemIn != before || k.MemOut != after {
					t.Fatalf("seed %d step %d %s: mem_in %s mem_out %s, want %s %s", seed, step, p.Kernel, k.MemIn, k.MemOut, before, after)
				}
			}
		}
	}
}

// saved is trace.Digest of the packet's coarse-grained buffers, each once,
// read back through the runtime.
func saved(t *testing.T, rt *Runtime, p hsa.Packet) string {
	var bufs [][]byte
	seen := map[uint64]bool{}
	for _, a := range p.Args {
		if a.Buffer == nil || a.Buffer.Kind != hsa.DeviceCoarse || seen[a.Buffer.Handle] {
			continue
		}
		seen[a.Buffer.Handle] = true
		b := make([]byte, a.Buffer.Size)
		if err := rt.Read(*a.Buffer, 0, b); err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	return trace.Digest(bufs...)
}

// A replay loop computes its two digests once, not once a pass.
func TestLoopDigestsOnce(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{}, "MI300")
	q, _ := rt.CreateQueue(1)
	x := buffer(t, rt, make([]int32, 1024)...)
	snap, err := rt.Snapshot(1, 1, []hsa.Allocation{x})
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 100 {
		if pass > 0 {
			if _, err := snap.Restore(); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Submit(1, dispatch("increment", 1024, buf(x))); err != nil {
			t.Fatal(err)
		}
	}
	if n := rt.mem.memo.computed; n != 2 {
		t.Errorf("100 passes computed %d digests, want 2 (before and after the kernel)", n)
	}
	ks := eventsOf(rec, trace.Kernel)
	if ks[0].MemIn == ks[0].MemOut || ks[99].MemIn != ks[0].MemIn || ks[99].MemOut != ks[0].MemOut {
		t.Errorf("first pass %s -> %s, last %s -> %s", ks[0].MemIn, ks[0].MemOut, ks[99].MemIn, ks[99].MemOut)
	}
}
