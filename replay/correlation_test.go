//go:build !mutation

package replay_test

import (
	"testing"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/trace"
)

// apiCalls opens, on two threads, the calls of two launches the way the
// simulator interleaves them: thread 1's launch, thread 2's launch, then
// thread 1's submission. It returns what API tracing reported.
func apiCalls(b *bench) []replay.APICallRecord {
	var seen []replay.APICallRecord
	b.sdk.ConfigureAPITracing(func(r replay.APICallRecord) { seen = append(seen, r) })
	b.sdk.EnterAPI(1, trace.CallLaunchKernel)
	b.sdk.EnterAPI(2, trace.CallLaunchKernel)
	b.sdk.EnterAPI(1, trace.CallQueueSubmit)
	return seen
}

// COR-1: an API call's ancestor is the innermost call open on its own
// thread, and a dispatch written inside takes the innermost call's ids,
// whatever another thread opened in between (decision 20.3.1).
func TestCorrelationFollowsTheThreadsCalls(t *testing.T) {
	var corr replay.CorrelationID
	b := newBench(t, replay.Options{}, func(b *bench) {
		ctx, _ := b.sdk.CreateContext()
		b.sdk.ConfigureCallbackTracing(ctx, replay.KindKernelReplay, nil, func(rec replay.CallbackRecord, _ *replay.UserData) {
			if rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter {
				corr = rec.Correlation
			}
		})
		b.sdk.StartContext(ctx)
	})
	seen := apiCalls(b)
	if len(seen) != 3 {
		t.Fatalf("API tracing reported %d calls, want 3: %+v", len(seen), seen)
	}
	launch1, launch2, submit1 := seen[0].Correlation, seen[1].Correlation, seen[2].Correlation
	if launch1.Ancestor != 0 || launch2.Ancestor != 0 {
		t.Errorf("each thread's launch opens inside nothing: ancestors %d and %d, want 0", launch1.Ancestor, launch2.Ancestor)
	}
	if submit1.Ancestor != launch1.Internal {
		t.Errorf("thread 1's submission has ancestor %d, want its own launch %d (thread 2's is %d)", submit1.Ancestor, launch1.Internal, launch2.Internal)
	}
	if seen[2].Thread != 1 || seen[2].Call != trace.CallQueueSubmit || seen[2].Phase != replay.PhaseEnter {
		t.Errorf("the submission is reported as %+v", seen[2])
	}
	if _, _, err := b.dispatch(); err != nil {
		t.Fatal(err)
	}
	if corr.Internal != submit1.Internal || corr.Ancestor != launch1.Internal {
		t.Errorf("the dispatch has correlation %d/%d, want thread 1's submission and launch %d/%d", corr.Internal, corr.Ancestor, submit1.Internal, launch1.Internal)
	}
	b.sdk.ExitAPI(1, trace.CallQueueSubmit)
	b.sdk.ExitAPI(1, trace.CallLaunchKernel)
	// Outside every call a dispatch gets an id of its own and no ancestor.
	if _, _, err := b.dispatch(); err != nil {
		t.Fatal(err)
	}
	if corr.Ancestor != 0 || corr.Internal <= submit1.Internal {
		t.Errorf("a dispatch outside every call has correlation %d/%d, want a new id and no ancestor", corr.Internal, corr.Ancestor)
	}
}

// The planted fault ancestor_process_wide takes thread 2's launch, the
// process's last entered call, as the ancestor of thread 1's submission.
func TestAncestorProcessWideFault(t *testing.T) {
	b := newBench(t, replay.Options{Faults: replay.Faults{replay.FaultAncestorProcessWide: true}}, nil)
	seen := apiCalls(b)
	if got, want := seen[2].Correlation.Ancestor, seen[1].Correlation.Internal; got != want {
		t.Errorf("with the fault, thread 1's submission has ancestor %d, want thread 2's launch %d", got, want)
	}
}
