package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/runner"
)

// markFlaky turns the failures of a flake's testcases (a known-flaky case
// that failed every attempt) into <flakyFailure>: a flake does not fail
// the run, in JUnit either.
func markFlaky(cases []junitCase, name string, flakes []runner.Attempted) []junitCase {
	if !slices.ContainsFunc(flakes, func(a runner.Attempted) bool { return a.Result.Spec.Name == name }) {
		return cases
	}
	for i := range cases {
		c := &cases[i]
		c.Flaky = append(c.Flaky, c.Failures...)
		if c.Error != nil {
			c.Flaky = append(c.Flaky, *c.Error)
		}
		c.Failures, c.Error = nil, nil
	}
	return cases
}

// flakeSuite is the JUnit suite of the flakes: one testcase each, passing
// (a flake does not fail the run), with the failure it showed first as a
// <flakyFailure> (the Surefire element CI servers show as flaky).
func flakeSuite(flakes []runner.Attempted, target string) junitSuite {
	s := junitSuite{Name: "replayspec flakes"}
	if target != "" {
		s.Name += " (" + target + ")"
	}
	var total float64
	for _, a := range flakes {
		total += a.Elapsed.Seconds()
		c := junitCase{Name: a.Result.Spec.Name, Classname: "replayspec.flakes", File: a.Result.Spec.File, Time: seconds(a.Elapsed.Seconds())}
		why := fmt.Sprintf("failed, then passed on attempt %d of %d", a.Attempts, a.Attempts)
		if a.Known != "" {
			why = fmt.Sprintf("failed on all %d attempts; listed as known-flaky (%s)", a.Attempts, a.Known)
		}
		var body strings.Builder
		if a.Failed != nil {
			for _, v := range a.Failed.Violations {
				body.WriteString(v.String() + "\n")
			}
			if a.Failed.Err != nil {
				body.WriteString(a.Failed.Err.Error() + "\n")
			}
		}
		c.Flaky = []junitFailed{{Message: why, Type: "flake", Body: body.String()}}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	s.Time = seconds(total)
	return s
}
