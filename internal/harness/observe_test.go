package harness

import (
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/trace"
)

// TestPayloadMembers: each member set on its own names that member alone,
// all set name all eight in the reference's order, none set names none
// (API-5, API-6).
func TestPayloadMembers(t *testing.T) {
	fn := func(replay.DispatchInfo, replay.UserData) uint64 { return 1 }
	cont := func(replay.DispatchInfo, uint64, uint64, replay.UserData) int { return 0 }
	local := func(replay.ContextID) replay.Status { return replay.StatusSuccess }
	one := []struct {
		set  func(p *replay.KernelReplayData)
		name string
	}{
		{func(p *replay.KernelReplayData) { p.Size = 1 }, trace.MemberSize},
		{func(p *replay.KernelReplayData) { p.DispatchInfo.DispatchID = 1 }, trace.MemberDispatchInfo},
		{func(p *replay.KernelReplayData) { p.CurrentPass = 1 }, trace.MemberCurrentPass},
		{func(p *replay.KernelReplayData) { p.TotalPasses = 1 }, trace.MemberTotalPasses},
		{func(p *replay.KernelReplayData) { p.ReplayPassCount = fn }, trace.MemberReplayPassCount},
		{func(p *replay.KernelReplayData) { p.ReplayContinue = cont }, trace.MemberReplayContinue},
		{func(p *replay.KernelReplayData) { p.ReplayStartContext = local }, trace.MemberReplayStartContext},
		{func(p *replay.KernelReplayData) { p.ReplayStopContext = local }, trace.MemberReplayStopContext},
	}
	var all replay.KernelReplayData
	var names []string
	for _, m := range one {
		var p replay.KernelReplayData
		m.set(&p)
		if got := PayloadMembers(&p); !slices.Equal(got, []string{m.name}) {
			t.Errorf("%s alone set: members %v", m.name, got)
		}
		m.set(&all)
		names = append(names, m.name)
	}
	if got := PayloadMembers(&all); !slices.Equal(got, names) {
		t.Errorf("all set: members %v, want %v", got, names)
	}
	if got := PayloadMembers(&replay.KernelReplayData{}); got != nil {
		t.Errorf("none set: members %v, want none", got)
	}
}

// TestPassOf: a pass pointer points at the pass, small or large, and
// consecutive equal large passes share one (a shared pointer never shows
// another value: the events only read it).
func TestPassOf(t *testing.T) {
	var last *uint64
	for _, v := range []uint64{0, 1, 1023, 1024, 1024, 5000, 5000, 1024, 1 << 40} {
		p := PassOf(v)
		if p == nil || *p != v {
			t.Fatalf("PassOf(%d) points at %v", v, p)
		}
		if v >= smallPasses && last != nil && *last == v && p != last {
			t.Errorf("PassOf(%d) twice running: two pointers", v)
		}
		last = p
	}
	if a, b := PassOf(7000), PassOf(7001); *a != 7000 || *b != 7001 {
		t.Errorf("PassOf(7000), PassOf(7001) point at %d and %d", *a, *b)
	}
}

// TestSharedFromManyThreads: threads sharing values at once each get a
// pointer to their own value, never another's, and the pointer once
// shared is never written again (run with -race: the collector of
// callbacks on free threads does this).
func TestSharedFromManyThreads(t *testing.T) {
	corr := func(c trace.Corr) *trace.Corr {
		return Corr(replay.CorrelationID{Internal: c.Internal, External: replay.UserData{Value: c.External}, Ancestor: c.Ancestor})
	}
	var wg sync.WaitGroup
	for th := range uint64(4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range uint64(300) {
				want := trace.Corr{Internal: th, External: i / 3, Ancestor: i % 2}
				p := corr(want)
				if *p != want {
					t.Errorf("thread %d shared %+v and was handed %+v", th, want, *p)
					return
				}
				if q := corr(want); *q != want {
					t.Errorf("thread %d shared %+v again and was handed %+v", th, want, *q)
					return
				}
			}
		}()
	}
	wg.Wait()
	a := corr(trace.Corr{Internal: 9})
	if b := corr(trace.Corr{Internal: 9}); a != b {
		t.Errorf("an equal value twice running: two pointers")
	}
	if c := corr(trace.Corr{Internal: 9, Ancestor: 1}); c == a || c.Ancestor != 1 {
		t.Errorf("a value differing in its last field was handed the last pointer")
	}
}

// TestDispatchInfoShared: an equal dispatch_info twice running shares one
// pointer; one that differs in any field is handed a pointer to its own.
func TestDispatchInfoShared(t *testing.T) {
	if n := reflect.TypeFor[trace.DispatchInfo]().NumField(); n != 6 {
		t.Fatalf("trace.DispatchInfo has %d fields: DispatchInfo compares 6 one by one; compare the new ones too, and change them here", n)
	}
	base := replay.DispatchInfo{Size: 64, KernelID: 3, PrivateSegmentSize: 4, GroupSegmentSize: 5,
		WorkgroupSize: hsa.Dim3{X: 64, Y: 1, Z: 1}, GridSize: hsa.Dim3{X: 256, Y: 1, Z: 1}}
	for _, change := range []func(*replay.DispatchInfo){
		func(d *replay.DispatchInfo) { d.Size++ },
		func(d *replay.DispatchInfo) { d.KernelID++ },
		func(d *replay.DispatchInfo) { d.PrivateSegmentSize++ },
		func(d *replay.DispatchInfo) { d.GroupSegmentSize++ },
		func(d *replay.DispatchInfo) { d.WorkgroupSize.Z++ },
		func(d *replay.DispatchInfo) { d.GridSize.Y++ },
	} {
		a := DispatchInfo(base)
		if b := DispatchInfo(base); a != b {
			t.Errorf("an equal dispatch_info twice running: two pointers")
		}
		other := base
		change(&other)
		b := DispatchInfo(other)
		dim := func(v hsa.Dim3) trace.Dim3 { return trace.Dim3{v.X, v.Y, v.Z} }
		want := trace.DispatchInfo{Size: other.Size, KernelID: other.KernelID, PrivateSegment: other.PrivateSegmentSize,
			GroupSegment: other.GroupSegmentSize, Workgroup: dim(other.WorkgroupSize), Grid: dim(other.GridSize)}
		if b == a || *b != want {
			t.Errorf("DispatchInfo(%+v) = %+v (shared: %v), want %+v", other, *b, b == a, want)
		}
	}
}
