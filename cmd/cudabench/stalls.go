package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/replayspec/replayspec/cuda"
)

// hostPath measures what reaching the driver costs the host: one trivial
// driver call (Runtime.Ping), back to back and after an idle gap (which
// lets a parked thread fall asleep), through the default executor (each
// caller locked to its own thread) and the earlier channel hand-off.
func hostPath(t *table, locked *cuda.Runtime, reps int) error {
	handOff, err := cuda.OpenWith(nil, cuda.Options{HandOff: true, NoCounters: true})
	if err != nil {
		return err
	}
	defer handOff.Close()
	for _, gap := range []time.Duration{0, 300 * time.Microsecond} {
		for _, c := range []struct {
			name string
			rt   *cuda.Runtime
		}{{"channel hand-off (before)", handOff}, {"caller locked to its thread (now)", locked}} {
			var s samples
			for i := range warmUp + reps {
				if gap > 0 {
					time.Sleep(gap)
				}
				d, err := wall(c.rt.Ping)
				if err != nil {
					return err
				}
				if i >= warmUp {
					s = append(s, d)
				}
			}
			what := "back to back"
			if gap > 0 {
				what = fmt.Sprintf("after %v idle", gap)
			}
			sorted := slices.Clone(s)
			slices.Sort(sorted)
			p99 := sorted[len(sorted)*99/100]
			t.row(fmt.Sprintf("host call into the driver, %s: %s (median; min; p99 %s, max %s)", what, c.name, dur(p99), dur(sorted[len(sorted)-1])),
				dur(s.median()), dur(s.min()), "no stall ≫ 10 µs")
		}
	}
	return nil
}
