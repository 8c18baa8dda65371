package runner

import (
	"context"
	"sync"

	"github.com/replayspec/replayspec/spec"
)

// RunParallel runs specs on jobs workers at once (each with its reruns,
// r) and hands every case to each in the specs' order, as soon as it and
// every case before it are done: reports, the results file and the
// progress read the same whatever the number of workers. Each case's trace
// is its own run's, so it is the same bytes as a run on one worker. It
// returns every case in order.
func RunParallel(ctx context.Context, specs []spec.Spec, opts Options, jobs int, r Retry, each func(i int, a Attempted)) []Attempted {
	out := make([]Attempted, len(specs))
	if len(specs) == 0 {
		return out
	}
	jobs = max(1, min(jobs, len(specs)))
	done := make([]bool, len(specs))
	var mu sync.Mutex
	next := 0 // the first case not yet handed to each
	finish := func(i int, a Attempted) {
		mu.Lock()
		defer mu.Unlock()
		out[i], done[i] = a, true
		for next < len(specs) && done[next] {
			if each != nil {
				each(next, out[next])
			}
			next++
		}
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				finish(i, RunAttempts(ctx, specs[i], opts, r))
			}
		}()
	}
	for i := range specs {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}
