package report

import "fmt"

// markFlaky turns the failures of a flake's testcases (a known-flaky case
// that failed every attempt) into <flakyFailure>: a flake does not fail
// the run, in JUnit either.
func markFlaky(su *junitSuite) {
	for i := range su.Cases {
		c := &su.Cases[i]
		if c.Failure != nil {
			c.Flaky = append(c.Flaky, *c.Failure)
		}
		if c.Error != nil {
			c.Flaky = append(c.Flaky, *c.Error)
		}
		c.Failure, c.Error = nil, nil
	}
}

// flakeSuite is the JUnit suite of the flakes: one testcase each, passing
// (a flake does not fail the run), with why it is a flake and the failure
// it showed first as a <flakyFailure> (the Surefire element CI servers
// show as flaky).
func flakeSuite(flakes []JSONResult, target string) junitSuite {
	s := junitSuite{Name: "replayspec flakes"}
	if target != "" {
		s.Name += " (" + target + ")"
	}
	var total float64
	for _, r := range flakes {
		total += r.ElapsedMS / 1e3
		name := r.Name
		if r.Run > 0 {
			name = fmt.Sprintf("%s#%d", name, r.Run)
		}
		c := junitCase{Name: name, Classname: "replayspec.flakes", File: r.File, Time: seconds(r.ElapsedMS / 1e3)}
		c.Flaky = []junitFailed{{Message: r.Reason, Type: "flake", Body: r.FlakyFailure}}
		s.Cases = append(s.Cases, c)
	}
	s.Time = seconds(total)
	return s
}
