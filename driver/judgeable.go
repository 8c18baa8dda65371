package driver

import (
	"slices"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/trace"
)

// Judgeable splits the rules the oracles judge by what a trace that
// reports srcs can show: judged are the rules some alternative of whose
// oracle sources (check.Registry) srcs holds; the others are not
// observable in such a trace.
func Judgeable(srcs []trace.Source) (judged, notObservable []string) {
	reg := check.Registry()
	for _, id := range check.JudgedRules() {
		ok := false
		for _, alt := range reg[id] {
			all := true
			for _, s := range alt {
				all = all && slices.Contains(srcs, s)
			}
			ok = ok || all
		}
		if ok {
			judged = append(judged, id)
		} else {
			notObservable = append(notObservable, id)
		}
	}
	return judged, notObservable
}
