package replay

import (
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

var warningText = map[trace.WarningCode]string{
	trace.WarnPassCountZeroWithoutContinue: "replay_pass_count returned 0 but no replay_continue is set; the dispatch runs once without replay",
	trace.WarnMultiPacketSubmission:        "only a submission of exactly one kernel dispatch packet is replayed; this one runs once",
	trace.WarnGraphLaunch:                  "dispatches from graph launches are not replayed; this one runs once",
	trace.WarnSnapshotIncomplete:           "the memory snapshot could not be completed; the dispatch runs once without replay",
	trace.WarnServiceConflict:              "these services cannot share one pass on this agent; the second is left out of the pass",
	trace.WarnReentrantDispatch:            "a dispatch written inside a replay window on its own agent is not replayed; it runs once, inside the window's pass",
}

// onceWarnings prints each warning code once per process (PC-6, ACT-6).
type onceWarnings struct {
	mu        sync.Mutex
	seen      map[trace.WarningCode]bool
	everyTime bool                                        // FaultWarnEveryTime
	perThread map[hsa.ThreadID]map[trace.WarningCode]bool // FaultWarnOncePerThread
}

func (w *onceWarnings) init(everyTime bool) {
	w.seen = map[trace.WarningCode]bool{}
	w.everyTime = everyTime
}

func (s *SDK) warn(code trace.WarningCode, dispatch uint64, detail string) {
	s.warnFrom(0, code, dispatch, detail)
}

// warnFrom is warn for a warning thread may owe: with
// warn_once_per_thread planted, each thread prints it once (ACT-6 broken).
func (s *SDK) warnFrom(thread hsa.ThreadID, code trace.WarningCode, dispatch uint64, detail string) {
	w := &s.warnings
	w.mu.Lock()
	first := !w.seen[code]
	w.seen[code] = true
	if s.pol.warnOncePerThread && thread != 0 {
		if w.perThread == nil {
			w.perThread = map[hsa.ThreadID]map[trace.WarningCode]bool{}
		}
		if w.perThread[thread] == nil {
			w.perThread[thread] = map[trace.WarningCode]bool{}
		}
		first = !w.perThread[thread][code]
		w.perThread[thread][code] = true
	}
	w.mu.Unlock()
	if !first && !w.everyTime {
		return
	}
	msg := warningText[code]
	if detail != "" {
		msg += " (" + detail + ")"
	}
	s.rec.EmitRef(&trace.Event{Type: trace.Warning, Code: code, Message: msg, Dispatch: dispatch})
}
