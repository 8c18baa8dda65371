package replay

import "sort"

// activeSet is an immutable view of the started contexts, rebuilt on every
// configure, start and stop, so that the interceptor reads it without a lock
// and a dispatch with nothing to do costs one atomic load (ACT-4).
type activeSet struct {
	contexts []toolContext // started contexts, by id
	replay   *toolContext  // the started context whose tracer covers CONFIG (ACT-1)
}

func (a *activeSet) empty() bool { return len(a.contexts) == 0 }

// startedBefore reports whether ctx was started in this view.
func (a *activeSet) has(ctx ContextID) bool {
	for i := range a.contexts {
		if a.contexts[i].id == ctx {
			return true
		}
	}
	return false
}

// refreshActive rebuilds the view; s.mu must be held.
func (s *SDK) refreshActive() {
	next := &activeSet{}
	for _, c := range s.contexts {
		if c.started {
			next.contexts = append(next.contexts, *c)
		}
	}
	sort.Slice(next.contexts, func(i, j int) bool { return next.contexts[i].id < next.contexts[j].id })
	if s.opts.Faults.Has(FaultActivateUnstarted) {
		// ACT-3 broken: a configured replay context counts, started or not.
		// Only reachable while some other context is started: the "nothing
		// started" fast path hides it otherwise.
		for _, c := range s.contexts {
			if c.replay != nil && !c.started && !next.empty() {
				next.replay = c
			}
		}
		if next.replay != nil {
			s.active.Store(next)
			return
		}
	}
	for i := range next.contexts {
		c := &next.contexts[i]
		// ACT-1, ACT-3: only a subscription covering CONFIG activates replay.
		if c.replay != nil && (c.replay.config || s.opts.Faults.Has(FaultActivateWithoutConfig)) {
			next.replay = c
		}
	}
	s.active.Store(next)
}
