package check

import (
	"fmt"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// DID-1 for a submission of several kernel packets: each packet is a
// logical dispatch with its own id (decision 7), whatever lies between
// them (barrier packets, issue 20). Once the SDK took the write (it named
// one of its dispatches) and the application saw the submission complete,
// every kernel packet had its id: the SDK reserved as many ids as kernel
// packets, and the runtime ran no kernel of the write untagged.
func (x *index) checkEveryPacketNamed(a *appView) []Violation {
	want := max(x.ev[a.at].KernelPackets, 1)
	if want < 2 || a.dispatch == 0 || len(a.complete) == 0 {
		return nil
	}
	x.examined("DID-1")
	var untagged []int
	pos := x.byThread[a.thread]
	for j := sort.SearchInts(pos, a.at+1); j < len(pos) && pos[j] < a.complete[0]; j++ {
		if e := &x.ev[pos[j]]; e.Type == trace.Kernel && e.Dispatch == 0 && e.Kernel == x.ev[a.at].Kernel && !x.byTool[pos[j]] {
			untagged = append(untagged, pos[j])
		}
	}
	var msg string
	ev := []int{a.at}
	switch {
	case len(untagged) > 0:
		msg = fmt.Sprintf("%s wrote %d kernel packets and %d of its kernels ran with no dispatch id: each packet is a logical dispatch with its own", a.label, want, len(untagged))
		ev = append(ev, untagged...)
	case x.has(trace.DispatchID) && len(a.reserves) < want:
		msg = fmt.Sprintf("%s wrote %d kernel packets and completed, but only %d dispatch id(s) were reserved for it: each packet is a logical dispatch with its own", a.label, want, len(a.reserves))
		ev = append(append(ev, a.reserves...), a.complete[0])
	default:
		return nil
	}
	v := x.violation("DID-1", a.dispatch, msg, ev...)
	v.Label = a.label
	return []Violation{v}
}
