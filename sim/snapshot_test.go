package sim

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// MEM-2, MEM-4: a restore writes back exactly the pages written since the
// snapshot or the previous restore.
func TestRestoreWritesBackDirtyPages(t *testing.T) {
	type write struct {
		region int
		offset uint64
		n      int
	}
	tests := []struct {
		name       string
		sizes      []uint64
		writes     []write
		want       uint64
		restoreAll bool
	}{
		{name: "nothing written", sizes: []uint64{3 * pageSize}, want: 0},
		{name: "one byte dirties one page", sizes: []uint64{3 * pageSize}, writes: []write{{0, 10, 1}}, want: pageSize},
		{name: "write across a page boundary", sizes: []uint64{3 * pageSize}, writes: []write{{0, pageSize - 1, 2}}, want: 2 * pageSize},
		{name: "short last page", sizes: []uint64{pageSize + 100}, writes: []write{{0, pageSize, 1}}, want: 100},
		{name: "same page twice", sizes: []uint64{3 * pageSize}, writes: []write{{0, 0, 1}, {0, 5, 1}}, want: pageSize},
		{name: "two regions", sizes: []uint64{pageSize, 2 * pageSize}, writes: []write{{0, 0, 1}, {1, pageSize, 1}}, want: 2 * pageSize},
		{name: "restore all ignores dirtiness", sizes: []uint64{pageSize, 100}, restoreAll: true, want: pageSize + 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newTestRuntime(t, Config{RestoreAll: tt.restoreAll}, "MI300")
			var regions []hsa.Allocation
			for _, size := range tt.sizes {
				a, err := rt.Allocate(1, hsa.DeviceCoarse, size)
				if err != nil {
					t.Fatal(err)
				}
				if err := rt.Write(a, 0, []byte{7}); err != nil {
					t.Fatal(err)
				}
				regions = append(regions, a)
			}
			snap, err := rt.Snapshot(0, 1, regions)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Release()
			for _, w := range tt.writes {
				if err := rt.Write(regions[w.region], w.offset, make([]byte, w.n)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := snap.Restore()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("restored %d bytes, want %d", got, tt.want)
			}
			for _, a := range regions {
				b := make([]byte, 1)
				if err := rt.Read(a, 0, b); err != nil || b[0] != 7 {
					t.Errorf("region %d byte 0 = %v (%v), want 7", a.Handle, b, err)
				}
			}
			// MEM-2: the next restore starts from the previous one.
			if again, err := snap.Restore(); err != nil || (again != 0 && !tt.restoreAll) {
				t.Errorf("second restore wrote %d bytes (%v), want 0", again, err)
			}
		})
	}
}

func TestRestoreUndoesKernels(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300")
	x := buffer(t, rt, 1, 2, 3)
	q, err := rt.CreateQueue(1)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := rt.Snapshot(0, 1, []hsa.Allocation{x})
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 3 {
		if pass > 0 {
			if n, err := snap.Restore(); err != nil || n != 12 {
				t.Fatalf("pass %d: restore wrote %d bytes (%v), want 12", pass, n, err)
			}
		}
		if err := q.Submit(1, dispatch("increment", 3, buf(x))); err != nil {
			t.Fatal(err)
		}
		if got := readInt32s(t, rt, x); !cmp.Equal(got, []int32{2, 3, 4}) {
			t.Fatalf("pass %d: %v, want one run's result", pass, got)
		}
	}
}

// MEM-4: a region freed, or freed and allocated again, since the snapshot
// is skipped.
func TestRestoreSkipsFreedRegions(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{}, "MI300")
	kept := buffer(t, rt, 1)
	freed := buffer(t, rt, 2)
	snap, err := rt.Snapshot(0, 1, []hsa.Allocation{kept, freed})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bytes() != 8 {
		t.Errorf("Bytes() = %d, want 8", snap.Bytes())
	}
	for _, a := range []hsa.Allocation{kept, freed} {
		if err := rt.Write(a, 0, int32s(9)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Free(freed); err != nil {
		t.Fatal(err)
	}
	again := buffer(t, rt, 5) // may take the freed one's place; never its handle
	n, err := snap.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("restored %d bytes, want 4 (the kept region only)", n)
	}
	if got := readInt32s(t, rt, kept); got[0] != 1 {
		t.Errorf("kept region holds %d, want 1", got[0])
	}
	if got := readInt32s(t, rt, again); got[0] != 5 {
		t.Errorf("new region holds %d, want 5 (untouched)", got[0])
	}
}

func TestSnapshotFailures(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{FailSnapshotOver: 8}, "MI300", "MI200")
	small := buffer(t, rt, 1, 2)
	large := buffer(t, rt, 1, 2, 3)
	freed := buffer(t, rt, 1)
	if err := rt.Free(freed); err != nil {
		t.Fatal(err)
	}
	other, err := rt.Allocate(2, hsa.DeviceCoarse, 4)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		agent   hsa.AgentID
		regions []hsa.Allocation
		wantIs  error
	}{
		{name: "within the limit", agent: 1, regions: []hsa.Allocation{small, small}},
		{name: "over FailSnapshotOver (MEM-5)", agent: 1, regions: []hsa.Allocation{large}, wantIs: ErrInjected},
		{name: "freed region", agent: 1, regions: []hsa.Allocation{freed}, wantIs: hsa.ErrFreed},
		{name: "another agent's region", agent: 1, regions: []hsa.Allocation{other}},
		{name: "unknown agent", agent: 9, wantIs: hsa.ErrUnknownAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := rt.Snapshot(0, tt.agent, tt.regions)
			wantErr := tt.wantIs != nil || tt.name == "another agent's region"
			if wantErr != (err != nil) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
				t.Fatalf("err = %v, want %v", err, tt.wantIs)
			}
			if snap != nil {
				snap.Release()
				if _, err := snap.Restore(); err == nil {
					t.Error("restore of a released snapshot succeeded")
				}
			}
		})
	}
}

// MEM-5: the configured restore fails part-way and says so.
func TestRestoreFailureIsInjected(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{FailRestoreAt: 2}, "MI300")
	a, b := buffer(t, rt, 1), buffer(t, rt, 2)
	snap, err := rt.Snapshot(0, 1, []hsa.Allocation{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for i, wantErr := range []bool{false, true, false} {
		if err := rt.Write(a, 0, int32s(0)); err != nil {
			t.Fatal(err)
		}
		if err := rt.Write(b, 0, int32s(0)); err != nil {
			t.Fatal(err)
		}
		n, err := snap.Restore()
		if (err != nil) != wantErr || (wantErr && !errors.Is(err, ErrInjected)) {
			t.Fatalf("restore %d: err = %v, want error %v", i+1, err, wantErr)
		}
		if wantErr && n != 4 {
			t.Errorf("failed restore wrote %d bytes, want 4 (first region only)", n)
		}
	}
}

// A planted restore failure with nothing dirty still strikes in a copy:
// the runtime records a write, the trace's evidence that the process died
// in a restore (found by internal/specgen: a kernel that wrote only its
// second buffer failed the restore of the first, clean one, invisibly).
func TestRestoreFailureWithNothingDirtyStillWrites(t *testing.T) {
	for _, dirty := range []int{-1, 0, 1} {
		rt, rec := newTestRuntime(t, Config{FailRestoreAt: 1}, "MI300")
		bufs := []hsa.Allocation{buffer(t, rt, 1), buffer(t, rt, 2)}
		snap, err := rt.Snapshot(0, 1, bufs)
		if err != nil {
			t.Fatal(err)
		}
		if dirty >= 0 {
			if err := rt.Write(bufs[dirty], 0, int32s(9)); err != nil {
				t.Fatal(err)
			}
		}
		before := len(rec.Events())
		n, err := snap.Restore()
		if !errors.Is(err, ErrInjected) {
			t.Fatalf("dirty %d: err = %v, want the planted failure", dirty, err)
		}
		var writes []trace.Event
		for _, e := range rec.Events()[before:] {
			if e.Type == trace.MemWrite {
				writes = append(writes, e)
			}
		}
		if n == 0 || len(writes) != 1 || writes[0].Bytes != n {
			t.Errorf("dirty %d: the failed restore wrote %d bytes, recorded as %+v; want one write of what it wrote", dirty, n, writes)
		}
		if dirty == 1 && writes[0].Regions[0].Addr != bufs[1].Handle {
			t.Errorf("dirty buffer 1: the write went to %#x, want the dirty buffer %#x", writes[0].Regions[0].Addr, bufs[1].Handle)
		}
	}
}

// A restore with no live region makes no copy, so the planted failure has
// nothing to strike in: it succeeds, and the run goes on (found by
// internal/specgen: an agent with no buffer failed its empty restore
// without a trace of it).
func TestEmptyRestoreCannotFail(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{FailRestoreAt: 1}, "MI300")
	snap, err := rt.Snapshot(0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := snap.Restore(); err != nil || n != 0 {
		t.Errorf("restore of nothing: %d bytes, err %v; want 0 and no error", n, err)
	}
	if ws := eventsOf(rec, trace.MemWrite); len(ws) != 0 {
		t.Errorf("restore of nothing recorded writes: %+v", ws)
	}
}
