package harness

import (
	"slices"
	"sync"
	"testing"

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
	var s shared[trace.Corr]
	var wg sync.WaitGroup
	for th := range uint64(4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range uint64(300) {
				want := trace.Corr{Internal: th, External: i / 3}
				p := s.share(want)
				if *p != want {
					t.Errorf("thread %d shared %+v and was handed %+v", th, want, *p)
					return
				}
				if q := s.share(want); *q != want {
					t.Errorf("thread %d shared %+v again and was handed %+v", th, want, *q)
					return
				}
			}
		}()
	}
	wg.Wait()
	a := s.share(trace.Corr{Internal: 9})
	if b := s.share(trace.Corr{Internal: 9}); a != b {
		t.Errorf("an equal value twice running: two pointers")
	}
}
