package runner

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/replayspec/replayspec/spec"
)

// Flakes is a list of known-flaky case patterns (deqp-runner's habit): a
// case whose name a pattern matches and that fails is reported as a flake
// and does not fail the run.
type Flakes struct {
	File     string
	Patterns []FlakePattern
}

// FlakePattern is one line of the list: a regular expression matched
// against the whole case name, with the line it came from.
type FlakePattern struct {
	Text string
	Line int
	re   *regexp.Regexp
}

// LoadFlakes reads a flake list: one regular expression a line, matched
// against the whole case name (anchored); blank lines and # comments are
// skipped.
func LoadFlakes(path string) (Flakes, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Flakes{}, err
	}
	return ParseFlakes(path, data)
}

// ParseFlakes is LoadFlakes on data read elsewhere.
func ParseFlakes(name string, data []byte) (Flakes, error) {
	f := Flakes{File: name}
	var errs []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		re, err := regexp.Compile("^(?:" + line + ")$")
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d: %q is not a regular expression: %v", name, i+1, line, err))
			continue
		}
		f.Patterns = append(f.Patterns, FlakePattern{Text: line, Line: i + 1, re: re})
	}
	if len(errs) > 0 {
		return f, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return f, nil
}

// Match returns the pattern that matches case name, if any.
func (f Flakes) Match(name string) (FlakePattern, bool) {
	for _, p := range f.Patterns {
		if p.re.MatchString(name) {
			return p, true
		}
	}
	return FlakePattern{}, false
}

// Attempted is a case's result after its reruns.
type Attempted struct {
	// Result is the last attempt's: the one that passed for a flake.
	Result Result
	// Attempts is how many times the case ran.
	Attempts int
	// Flaky: the case failed and then passed on a rerun, or failed and
	// is listed as known-flaky (Known).
	Flaky bool
	// Known is the flake-list pattern the case matched, if it failed.
	Known string
	// Failed is the first failing attempt of a flake, for its report.
	Failed *Result
	// Elapsed is the time of every attempt.
	Elapsed time.Duration
}

// CaseStatus is a case's status in the results file and the baseline.
type CaseStatus string

// Case statuses (the results CSV writes these words).
const (
	CasePass  CaseStatus = "pass"
	CaseFail  CaseStatus = "fail"
	CaseError CaseStatus = "error"
	CaseSkip  CaseStatus = "skip"
	CaseFlake CaseStatus = "flake"
)

// Status reduces an attempted case to its status: a flake neither passes
// nor fails.
func (a Attempted) Status() CaseStatus {
	if a.Flaky {
		return CaseFlake
	}
	switch a.Result.Verdict() {
	case Pass:
		return CasePass
	case Skip:
		return CaseSkip
	case Error:
		return CaseError
	}
	return CaseFail
}

// Retry says how unexpected failures are rerun.
type Retry struct {
	// Retries is how many times a failing case is run again; a case that
	// passes on a rerun is a flake.
	Retries int
	// Flakes are the known-flaky cases: one that fails is a flake.
	Flakes Flakes
	// Expected reports whether a case's failure is expected (listed in
	// the baseline): such a case is not rerun.
	Expected func(name string) bool
}

// RunAttempts runs s, and runs it again up to r.Retries times while it
// fails unexpectedly, to tell a flake from a failure.
func RunAttempts(ctx context.Context, s spec.Spec, opts Options, r Retry) Attempted {
	res := Run(ctx, s, opts)
	a := Attempted{Result: res, Attempts: 1, Elapsed: res.Elapsed}
	failed := func(x Result) bool { v := x.Verdict(); return v == Fail || v == Error }
	if !failed(res) || (r.Expected != nil && r.Expected(s.Name)) {
		return a
	}
	first := res
	for a.Attempts <= r.Retries && failed(a.Result) && ctx.Err() == nil {
		a.Result = Run(ctx, s, opts)
		a.Attempts++
		a.Elapsed += a.Result.Elapsed
	}
	if !failed(a.Result) {
		a.Flaky, a.Failed = true, &first
		return a
	}
	if p, ok := r.Flakes.Match(s.Name); ok {
		a.Flaky, a.Known, a.Failed = true, p.Text, &first
	}
	return a
}
