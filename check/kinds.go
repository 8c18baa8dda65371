package check

import (
	"unsafe"

	"github.com/replayspec/replayspec/trace"
)

// evKind is an event type as a small number: the index files every event by
// its type, and a map keyed by the type's string hashed it for each event
// (a switch on the string is a fifth of that). Types this version does not
// know share ekOther.
type evKind uint8

const (
	ekAPI evKind = iota
	ekCallback
	ekReturned
	ekPassCount
	ekContinue
	ekLocal
	ekRecord
	ekCorrelation
	ekToolDispatch
	ekToolComplete
	ekAPICall
	ekToolMemory
	ekToolSignal
	ekAgentInfo
	ekDispatchID
	ekSnapshot
	ekRestore
	ekNeverEnded
	ekKernel
	ekSignal
	ekMemRead
	ekMemWrite
	ekAppAlloc
	ekAppFree
	ekAppDispatch
	ekAppComplete
	ekAppReadback
	ekAppMemory
	ekAppTimeout
	ekAppSignal
	ekWarning
	ekOther // a type this version does not know
	evKinds // how many
)

// evKindOf is t's evKind. TestKindOfEveryType keeps it one-to-one with
// trace.Types().
func evKindOf(t trace.Type) evKind {
	switch t {
	case trace.API:
		return ekAPI
	case trace.Callback:
		return ekCallback
	case trace.Returned:
		return ekReturned
	case trace.PassCount:
		return ekPassCount
	case trace.Continue:
		return ekContinue
	case trace.Local:
		return ekLocal
	case trace.Record:
		return ekRecord
	case trace.Correlation:
		return ekCorrelation
	case trace.ToolDispatch:
		return ekToolDispatch
	case trace.ToolComplete:
		return ekToolComplete
	case trace.APICall:
		return ekAPICall
	case trace.ToolMemory:
		return ekToolMemory
	case trace.ToolSignal:
		return ekToolSignal
	case trace.AgentInfo:
		return ekAgentInfo
	case trace.DispatchID:
		return ekDispatchID
	case trace.Snapshot:
		return ekSnapshot
	case trace.Restore:
		return ekRestore
	case trace.NeverEnded:
		return ekNeverEnded
	case trace.Kernel:
		return ekKernel
	case trace.Signal:
		return ekSignal
	case trace.MemRead:
		return ekMemRead
	case trace.MemWrite:
		return ekMemWrite
	case trace.AppAlloc:
		return ekAppAlloc
	case trace.AppFree:
		return ekAppFree
	case trace.AppDispatch:
		return ekAppDispatch
	case trace.AppComplete:
		return ekAppComplete
	case trace.AppReadback:
		return ekAppReadback
	case trace.AppMemory:
		return ekAppMemory
	case trace.AppTimeout:
		return ekAppTimeout
	case trace.AppSignal:
		return ekAppSignal
	case trace.Warning:
		return ekWarning
	}
	return ekOther
}

// opPhase is an event's op and phase where they are those of a replay
// callback: CONFIG or PASS, ENTER or EXIT; cbOther for anything else
// (none, another op or phase).
type opPhase uint8

const (
	cbOther opPhase = iota
	cbConfigEnter
	cbConfigExit
	cbPassEnter
	cbPassExit
)

// opPhaseOf is e's opPhase.
func opPhaseOf(e *trace.Event) opPhase {
	var k opPhase
	switch e.Op {
	case trace.OpConfig:
		k = cbConfigEnter
	case trace.OpPass:
		k = cbPassEnter
	default:
		return cbOther
	}
	switch e.Phase {
	case trace.PhaseEnter:
		return k
	case trace.PhaseExit:
		return k + 1
	}
	return cbOther
}

// opPhaseAt is event i's opPhase.
func (x *index) opPhaseAt(i int) opPhase {
	if x.col == nil {
		return opPhaseOf(&x.ev[i]) // an index made by hand, in a test
	}
	return x.col[i].op
}

// kindCache remembers the evKind of the types it was asked about lately,
// by where each type's bytes lie: the index asks for every event's, a
// trace repeats a few types, and their strings are mostly one copy each
// (the trace package's constants, or its decoder's and recorder's words).
// The same bytes at the same length are the same type; an equal type
// elsewhere in memory only misses the cache. A slot holds its type's
// string, not only where it lay: a stream keeps its cache while the
// events it saw are let go, and bytes freed could come back as another
// type's at the same place.
type kindCache [kindSlots]struct {
	t trace.Type
	k evKind
}

const kindSlots = 16

// of is t's evKind.
func (c *kindCache) of(t trace.Type) evKind {
	if t == "" {
		return evKindOf(t)
	}
	p := unsafe.StringData(string(t))
	l := &c[(uintptr(unsafe.Pointer(p))>>3)%kindSlots]
	if len(l.t) == len(t) && unsafe.StringData(string(l.t)) == p {
		return l.k
	}
	k := evKindOf(t)
	l.t, l.k = t, k
	return k
}
