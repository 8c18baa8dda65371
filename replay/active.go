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
	if s.pol.activateUnstarted {
		// ACT-3 broken: a configured replay context counts, started or not.
		// Only reachable while some other context is started: the "nothing
		// started" fast path hides it otherwise.
		for _, c := range s.contexts {
			if c.replay != nil && !c.started && !next.empty() {
				next.replay = c
			}
		}
		if next.replay != nil {
			s.publish(next)
			return
		}
	}
	for i := range next.contexts {
		c := &next.contexts[i]
		// ACT-1, ACT-3: only a subscription covering CONFIG activates replay.
		if c.replay != nil && (c.replay.config || s.pol.activateWithoutConfig) {
			next.replay = c
		}
	}
	s.publish(next)
}

// publish makes next the view the interceptor reads.
func (s *SDK) publish(next *activeSet) {
	s.active.Store(next)
	s.updateIdle()
}

// updateIdle says whether a write needs anything of the SDK: not while a
// context is started (ACT-4), nor once KERNEL_REPLAY is configured, since
// from then a write with nothing started still takes its agent's read lock,
// so that a loop holding the agent waits for it or it for the loop (MEM-6,
// decisions 17.10 and 18.2). Whoever changes either calls it after the
// change; the lock makes the last call read the latest of both, so the flag
// never stays idle while a context is started.
func (s *SDK) updateIdle() {
	s.idleMu.Lock()
	s.idle.Store(s.active.Load().empty() && !s.replayConfigured.Load())
	s.idleMu.Unlock()
}
