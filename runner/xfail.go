package runner

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/rules"
)

// Status is a spec's outcome once a port's expected failures are applied.
type Status string

// Statuses.
const (
	Passed   Status = "passed"
	Failed   Status = "failed"
	Skipped  Status = "skipped"
	Expected Status = "expected failure"
	Errored  Status = "error"
)

// XFail is a port's list of known failures: rule IDs or spec names, each
// with a reason. A listed spec or rule that fails is an expected failure;
// one that passes is an error, so that the list stays true (the toml-test
// habit).
type XFail struct {
	File    string
	Entries []XEntry
}

// XEntry is one line of the list.
type XEntry struct {
	Key    string // a rule ID (PC-3) or a spec name
	Rule   bool   // Key is a rule ID
	Reason string
	Line   int
}

var ruleKey = rules.IDPattern

// LoadXFail reads an expected-failure list: one entry a line, the rule ID
// or spec name, blanks, then the reason; # starts a comment.
func LoadXFail(path string) (XFail, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return XFail{}, err
	}
	return ParseXFail(path, data)
}

// ParseXFail is LoadXFail on data read elsewhere; name is used in messages.
func ParseXFail(name string, data []byte) (XFail, error) {
	xf := XFail{File: name}
	seen := map[string]int{}
	var errs []string
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, " ")
		if k, r, ok := strings.Cut(key, "\t"); ok {
			key, reason = k, r+" "+reason
		}
		reason = strings.TrimSpace(reason)
		switch {
		case reason == "":
			errs = append(errs, fmt.Sprintf("%s:%d: %s has no reason: write `%s why it fails`", name, n, key, key))
		case seen[key] > 0:
			errs = append(errs, fmt.Sprintf("%s:%d: %s is listed twice (first on line %d)", name, n, key, seen[key]))
		}
		seen[key] = n
		xf.Entries = append(xf.Entries, XEntry{Key: key, Rule: ruleKey.MatchString(key), Reason: reason, Line: n})
	}
	if len(errs) > 0 {
		return xf, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return xf, nil
}

func (xf XFail) lookup(key string) (XEntry, bool) {
	for _, e := range xf.Entries {
		if e.Key == key {
			return e, true
		}
	}
	return XEntry{}, false
}

// Outcome is one spec's result with the list applied.
type Outcome struct {
	Result Result
	Status Status
	// Reason says why it is skipped, expected to fail (the list's
	// reasons) or an error.
	Reason string
	// Listed are the entries of the list that matched this spec.
	Listed []XEntry
}

// FailingRules lists the rule IDs a result fails: its unexpected
// violations ("EXPECT" for the spec's own expectations), the expected
// violations no oracle reported, and the named rules its trace never
// exercised.
func FailingRules(r Result) []string {
	var ids []string
	for _, v := range r.Violations {
		if !slices.Contains(ids, v.Rule) {
			ids = append(ids, v.Rule)
		}
	}
	for _, id := range append(slices.Clone(r.Unseen), r.Unexercised...) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Apply gives each result its outcome, in order. A zero XFail lists
// nothing: outcomes are then the runner's verdicts.
func (xf XFail) Apply(results []Result) []Outcome {
	out := make([]Outcome, len(results))
	failedRule := map[string]bool{}
	for i, r := range results {
		o := Outcome{Result: r}
		entry, listed := xf.lookup(r.Spec.Name)
		if listed {
			o.Listed = []XEntry{entry}
		}
		switch r.Verdict() {
		case Skip:
			o.Status, o.Reason = Skipped, r.SkipReason
		case Pass:
			o.Status = Passed
			if listed {
				o.Status = Errored
				o.Reason = fmt.Sprintf("spec %s is listed as failing (%s:%d) but passed: remove it from %s", r.Spec.Name, xf.File, entry.Line, xf.File)
			}
		case Error:
			o.Status, o.Reason = Errored, r.Err.Error()
			if listed {
				o.Status, o.Reason = Expected, entry.Reason
			}
		case Fail:
			failing := FailingRules(r)
			for _, id := range failing {
				failedRule[id] = true
			}
			if listed {
				o.Status, o.Reason = Expected, entry.Reason
				break
			}
			var unlisted, reasons []string
			for _, id := range failing {
				e, ok := xf.lookup(id)
				if !ok || !e.Rule {
					unlisted = append(unlisted, id)
					continue
				}
				o.Listed = append(o.Listed, e)
				reasons = append(reasons, id+": "+e.Reason)
			}
			if len(unlisted) == 0 {
				o.Status, o.Reason = Expected, strings.Join(reasons, "; ")
			} else {
				o.Status, o.Reason = Failed, "fails "+strings.Join(unlisted, ", ")
			}
		}
		out[i] = o
	}
	// A listed rule that failed nowhere is stale where it was shown to
	// hold: on the passing specs that name it.
	for _, e := range xf.Entries {
		if !e.Rule || failedRule[e.Key] {
			continue
		}
		for i := range out {
			if out[i].Status == Passed && slices.Contains(out[i].Result.Spec.Rules, e.Key) {
				out[i].Status = Errored
				out[i].Listed = append(out[i].Listed, e)
				out[i].Reason = fmt.Sprintf("rule %s is listed as failing (%s:%d) but passed here and failed nowhere: remove it from %s", e.Key, xf.File, e.Line, xf.File)
			}
		}
	}
	return out
}

// Unexpected reports whether any outcome is a failure or an error: the
// exit status 1 of a run with a list.
func Unexpected(outcomes []Outcome) bool {
	for _, o := range outcomes {
		if o.Status == Failed || o.Status == Errored {
			return true
		}
	}
	return false
}
