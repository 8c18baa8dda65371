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
	// Flaky: the case failed, then passed on a rerun, or failed and is
	// listed as known-flaky (--retries, --flakes): it does not fail a run.
	Flaky Status = "flaky"
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

// Outcome is one result with the list applied, as it finishes. Whether a
// listed rule is stale is known only once every spec has run: Stale says.
func (xf XFail) Outcome(r Result) Outcome {
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
		if listed {
			o.Status, o.Reason = Expected, entry.Reason
			break
		}
		var unlisted, reasons []string
		for _, id := range FailingRules(r) {
			e, ok := xf.lookup(id)
			if !ok || !e.Rule {
				unlisted = append(unlisted, id)
				continue
			}
			o.Listed = append(o.Listed, e)
			reasons = append(reasons, id+": "+e.Reason)
		}
		switch {
		case len(unlisted) > 0:
			o.Status, o.Reason = Failed, "fails "+strings.Join(unlisted, ", ")
		case len(reasons) == 0:
			// A failure that names no rule (nothing judged) is
			// excused by no rule entry: only listing the spec can.
			o.Status, o.Reason = Failed, "nothing judged: no oracle examined anything in the trace"
		default:
			o.Status, o.Reason = Expected, strings.Join(reasons, "; ")
		}
	}
	return o
}

// StaleEntry is a listed rule that failed in no spec of the run and held
// in the specs named here: the list is no longer true.
type StaleEntry struct {
	Entry XEntry
	// Held are the specs that name the rule and passed.
	Held []string
}

// Message says what is wrong with the entry and what to do.
func (s StaleEntry) Message(file string) string {
	return fmt.Sprintf("%s:%d: rule %s is listed as failing, but it failed in no spec and held in %s: remove it from %s",
		file, s.Entry.Line, s.Entry.Key, strings.Join(s.Held, ", "), file)
}

// Stale lists the rule entries that failed nowhere in outcomes but held in
// a passing spec that names them. An entry no spec of the run touched is
// not stale: the run may have been a shard.
func (xf XFail) Stale(outcomes []Outcome) []StaleEntry {
	failed := map[string]bool{}
	for _, o := range outcomes {
		if v := o.Result.Verdict(); v == Fail {
			for _, id := range FailingRules(o.Result) {
				failed[id] = true
			}
		}
	}
	var out []StaleEntry
	for _, e := range xf.Entries {
		if !e.Rule || failed[e.Key] {
			continue
		}
		st := StaleEntry{Entry: e}
		for _, o := range outcomes {
			if o.Status == Passed && slices.Contains(o.Result.Spec.Rules, e.Key) && !slices.Contains(st.Held, o.Result.Spec.Name) {
				st.Held = append(st.Held, o.Result.Spec.Name)
			}
		}
		if len(st.Held) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// Apply gives each result its outcome, in order, with stale rule entries
// marked on the passing specs that name them. A zero XFail lists nothing:
// outcomes are then the runner's verdicts.
func (xf XFail) Apply(results []Result) []Outcome {
	out := make([]Outcome, len(results))
	for i, r := range results {
		out[i] = xf.Outcome(r)
	}
	for _, st := range xf.Stale(out) {
		e := st.Entry
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

// Check refuses entries that name nothing: a rule ID the catalogue does
// not have, or a spec name none of specs has. Such a line would silently
// excuse nothing, or a typo would hide for ever.
func (xf XFail) Check(specNames []string) error {
	var errs []string
	for _, e := range xf.Entries {
		switch {
		case e.Rule:
			if _, ok := rules.Lookup(e.Key); !ok {
				errs = append(errs, fmt.Sprintf("%s:%d: %s is not a rule of the catalogue (replayspec rules lists them)", xf.File, e.Line, e.Key))
			}
		case !slices.Contains(specNames, e.Key):
			errs = append(errs, fmt.Sprintf("%s:%d: %q names no rule and no spec of this run (a rule ID like PC-3, or a spec's name: replayspec list shows them)", xf.File, e.Line, e.Key))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
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

// IsRuleKey reports whether an entry's key is a rule ID (PC-3) rather than
// a spec name.
func IsRuleKey(key string) bool { return ruleKey.MatchString(key) }
