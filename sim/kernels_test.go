package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/hsa"
)

func TestKernelEffects(t *testing.T) {
	tests := []struct {
		name   string
		kernel string
		grid   uint32
		bufs   [][]int32 // initial contents, in argument order
		scalar *int32
		want   [][]int32
	}{
		{name: "increment", kernel: "increment", grid: 3, bufs: [][]int32{{1, 2, 3}}, want: [][]int32{{2, 3, 4}}},
		{name: "increment clamps the grid to the buffer", kernel: "increment", grid: 100,
			bufs: [][]int32{{1, 2}}, want: [][]int32{{2, 3}}},
		{name: "increment of a partial grid", kernel: "increment", grid: 1,
			bufs: [][]int32{{1, 2}}, want: [][]int32{{2, 2}}},
		{name: "accumulate", kernel: "accumulate", grid: 3, bufs: [][]int32{{1, 2, 3}, {10, 20, 30}},
			want: [][]int32{{11, 22, 33}, {10, 20, 30}}},
		{name: "atomic_counter adds the grid", kernel: "atomic_counter", grid: 70,
			bufs: [][]int32{{5, 9}}, want: [][]int32{{75, 9}}},
		{name: "fill", kernel: "fill", grid: 3, bufs: [][]int32{{1, 2, 3}}, scalar: ptr(int32(-7)),
			want: [][]int32{{-7, -7, -7}}},
		{name: "saxpy", kernel: "saxpy", grid: 2, bufs: [][]int32{{1, 2}, {3, 4}}, scalar: ptr(int32(2)),
			want: [][]int32{{7, 10}, {3, 4}}},
		{name: "increment wraps like int32", kernel: "increment", grid: 1, bufs: [][]int32{{2147483647}},
			want: [][]int32{{-2147483648}}},
		// The kernel adds two elements a step, each in half of a word:
		// neither half's wrap may reach the other, and an odd count's last
		// element is added alone.
		{name: "increment wraps each element of a pair alone", kernel: "increment", grid: 5,
			bufs: [][]int32{{-1, 7, 2147483647, -1, -1}},
			want: [][]int32{{0, 8, -2147483648, 0, 0}}},
		{name: "increment of an odd grid leaves the rest", kernel: "increment", grid: 3,
			bufs: [][]int32{{1, 2, 3, 4}},
			want: [][]int32{{2, 3, 4, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newTestRuntime(t, Config{}, "MI300")
			q, err := rt.CreateQueue(1)
			if err != nil {
				t.Fatal(err)
			}
			var allocs []hsa.Allocation
			var args []hsa.Arg
			for _, b := range tt.bufs {
				a := buffer(t, rt, b...)
				allocs = append(allocs, a)
				args = append(args, buf(a))
			}
			if tt.scalar != nil {
				args = append(args, scalar(*tt.scalar))
			}
			if err := q.Submit(1, dispatch(tt.kernel, tt.grid, args...)); err != nil {
				t.Fatal(err)
			}
			var got [][]int32
			for _, a := range allocs {
				got = append(got, readInt32s(t, rt, a))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("buffers (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// One submission of several kernels, barriers between, more packets than
// execute keeps the kernels of on its stack: each packet runs its own.
func TestBatchRunsEachPacketsKernel(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300")
	q, err := rt.CreateQueue(1)
	if err != nil {
		t.Fatal(err)
	}
	x, y := buffer(t, rt, 1, 2), buffer(t, rt, 10, 20)
	barrier := hsa.Packet{Type: hsa.BarrierPacket}
	if err := q.Submit(1, dispatch("fill", 2, buf(x), scalar(5)), barrier, dispatch("increment", 2, buf(x)),
		dispatch("increment", 2, buf(x)), barrier, dispatch("accumulate", 2, buf(y), buf(x))); err != nil {
		t.Fatal(err)
	}
	if got, want := [][]int32{readInt32s(t, rt, x), readInt32s(t, rt, y)}, [][]int32{{7, 7}, {17, 27}}; !cmp.Equal(got, want) {
		t.Errorf("x, y = %v, want %v", got, want)
	}
}

func TestSubmitRejectsBadDispatches(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300", "consumer")
	x := buffer(t, rt, 1, 2)
	tiny, err := rt.Allocate(1, hsa.DeviceCoarse, 3)
	if err != nil {
		t.Fatal(err)
	}
	freed := buffer(t, rt, 1)
	if err := rt.Free(freed); err != nil {
		t.Fatal(err)
	}
	profiled := func(p hsa.Packet, counters ...string) hsa.Packet {
		p.Profile = &hsa.Profile{Counters: counters}
		return p
	}
	tests := []struct {
		name    string
		agent   hsa.AgentID
		packet  hsa.Packet
		wantErr string
		wantIs  error
	}{
		{name: "unknown kernel", packet: dispatch("nope", 1), wantIs: hsa.ErrUnknownKernel},
		{name: "missing argument", packet: dispatch("accumulate", 1, buf(x)), wantErr: "takes 2 buffer(s), got 1"},
		{name: "extra argument", packet: dispatch("increment", 1, buf(x), buf(x)), wantErr: "takes 1 buffer(s), got 2"},
		{name: "scalar for a buffer", packet: dispatch("increment", 1, scalar(3)), wantErr: "must be a buffer"},
		{name: "buffer for a scalar", packet: dispatch("fill", 1, buf(x), buf(x)), wantErr: "must be a scalar"},
		{name: "freed buffer", packet: dispatch("increment", 1, buf(freed)), wantIs: hsa.ErrFreed},
		{name: "unknown buffer", packet: dispatch("increment", 1, buf(hsa.Allocation{Handle: 999})), wantIs: hsa.ErrBadAccess},
		{name: "buffer without an element", packet: dispatch("increment", 1, buf(tiny)), wantErr: "no int32 element"},
		{name: "unknown packet type", packet: hsa.Packet{Type: 9}, wantErr: "unknown packet type"},
		{name: "workgroup too large", packet: hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment",
			Grid: hsa.Dim3{X: 1}, Workgroup: hsa.Dim3{X: 2048}, Args: []hsa.Arg{buf(x)}}, wantErr: "workgroup"},
		{name: "unknown counter", packet: profiled(dispatch("increment", 1, buf(x)), "SQ_NOPE"), wantErr: `no counter "SQ_NOPE"`},
		{name: "counter the consumer lacks", agent: 2, packet: profiled(dispatch("increment", 1, buf(x)), "TCC_EA_RDREQ"),
			wantErr: `no counter "TCC_EA_RDREQ"`},
		{name: "counters needing two passes", packet: profiled(dispatch("increment", 1, buf(x)), "TCC_HIT", "TCC_MISS"),
			wantErr: "need 2 passes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := tt.agent
			if agent == 0 {
				agent = 1
			}
			q, err := rt.CreateQueue(agent)
			if err != nil {
				t.Fatal(err)
			}
			err = q.Submit(1, tt.packet)
			switch {
			case err == nil:
				t.Fatal("Submit accepted it")
			case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
				t.Fatalf("err = %v, want %v", err, tt.wantIs)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	if got := readInt32s(t, rt, x); !cmp.Equal(got, []int32{1, 2}) {
		t.Errorf("a rejected dispatch changed memory: %v", got)
	}
}

func TestKernelsListsTheLibrary(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300")
	var got []string
	for _, k := range Kernels() {
		got = append(got, k.Name+"/"+arity(k))
		if !rt.HasKernel(k.Name) {
			t.Errorf("HasKernel(%q) = false", k.Name)
		}
	}
	want := []string{"accumulate/2 buffer(s)", "atomic_counter/1 buffer(s)", "fill/1 buffer(s) and a scalar",
		"increment/1 buffer(s)", "increment_pair/2 buffer(s)", "saxpy/2 buffer(s) and a scalar"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kernels (-want +got):\n%s", diff)
	}
	if rt.HasKernel("nope") {
		t.Error(`HasKernel("nope") = true`)
	}
}

// increment_pair writes both of its buffers, so a restore must bring both
// back (MEM-2): the second buffer's pages are dirty too.
func TestKernelWritingTwoBuffersIsRestoredWhole(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300")
	x, y := buffer(t, rt, 1, 2), buffer(t, rt, 10, 20)
	snap, err := rt.Snapshot(1, 1, []hsa.Allocation{x, y})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	q, err := rt.CreateQueue(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(1, dispatch("increment_pair", 2, buf(x), buf(y))); err != nil {
		t.Fatal(err)
	}
	if gx, gy := readInt32s(t, rt, x), readInt32s(t, rt, y); !cmp.Equal(gx, []int32{2, 3}) || !cmp.Equal(gy, []int32{11, 21}) {
		t.Fatalf("after the kernel x=%v y=%v, want [2 3] [11 21]", gx, gy)
	}
	if _, err := snap.Restore(); err != nil {
		t.Fatal(err)
	}
	if gx, gy := readInt32s(t, rt, x), readInt32s(t, rt, y); !cmp.Equal(gx, []int32{1, 2}) || !cmp.Equal(gy, []int32{10, 20}) {
		t.Errorf("after the restore x=%v y=%v, want [1 2] [10 20]", gx, gy)
	}
}
