package check

import (
	"fmt"

	"github.com/replayspec/replayspec/trace"
)

// A buffer event (app_readback, app_memory, or any later event that carries
// a buffer's contents as runs) claims to be the whole buffer: every value
// judged from it is judged over the buffer the application allocated, not
// over what the event chose to carry. These helpers are shared by the
// expectations on memory and by the MEM oracles' use of read-backs.

// bufferElements is the element count of buffer as the application
// allocated it (its app_alloc's bytes / 4), from the last allocation of that
// name before position at; ok is false when none is in the trace.
func (x *index) bufferElements(buffer string, at int) (n uint64, ok bool) {
	for _, i := range x.types[ekAppAlloc] {
		if i >= at {
			break
		}
		if e := &x.ev[i]; e.Buffer == buffer {
			n, ok = e.Bytes/4, true
		}
	}
	return n, ok
}

// notWhole says how the buffer event at position i falls short of the
// buffer it names ("" when it is whole): its element count must be the
// buffer's size from app_alloc, its runs must spell exactly that many
// elements, and its digest must be the digest of the values the runs spell.
// A count or a digest the event merely asserts proves nothing: a port that
// reads back 10 of 256 elements and says "10" would otherwise pass.
func (x *index) notWhole(i int) string {
	e := &x.ev[i]
	size, known := x.bufferElements(e.Buffer, i)
	return wholeBuffer(e, size, known, x.header.DigestAlgorithm())
}

// wholeBuffer is notWhole for event e of a buffer of size elements (known:
// whether the trace says how large the buffer is), in a trace whose digests
// are by alg (its header's).
func wholeBuffer(e *trace.Event, size uint64, known bool, alg trace.DigestAlgorithm) string {
	n := trace.CountOf(e.Runs)
	switch {
	case !known:
		return fmt.Sprintf("the trace has no app_alloc of buffer %s before its %s, so whether the %d elements read are the whole buffer cannot be told", e.Buffer, e.Type, n)
	case e.Elements == 0 || n == 0:
		return fmt.Sprintf("the %s event of buffer %s carries no elements (the buffer has %d), so nothing could be compared", e.Type, e.Buffer, size)
	case n != e.Elements:
		return fmt.Sprintf("the %s event's runs spell %d elements of buffer %s, but it says it holds %d", e.Type, n, e.Buffer, e.Elements)
	case n != size:
		return fmt.Sprintf("the application read %d elements of buffer %s, but the buffer has %d (app_alloc: %d bytes): a read-back is judged on the whole buffer", n, e.Buffer, size, size*4)
	case e.Digest == "":
		return fmt.Sprintf("the %s event of buffer %s carries no digest of the bytes read", e.Type, e.Buffer)
	case n <= maxRebuild:
		if d := alg.DigestRuns(e.Runs); d != e.Digest {
			return fmt.Sprintf("the %s event of buffer %s says its bytes digest to %s, but the values its runs spell digest to %s", e.Type, e.Buffer, e.Digest, d)
		}
	}
	return ""
}
