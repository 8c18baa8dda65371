// Package coverage is the reviewed map from rule to what shows it: the
// specs whose traces exercised the rule and held (the oracles' own count,
// not the specs' rules: lists) and the Gherkin scenarios tagged with it
// that passed. replayspec rules prints it; make rules fails on a gap.
package coverage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gherkin "github.com/cucumber/gherkin/go/v42"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/runner"
)

// Rule is one rule and what shows it. JSON field names are stable.
type Rule struct {
	ID     string `json:"id"`
	Family string `json:"family"`
	Text   string `json:"text"`
	// Specs held the rule: an oracle examined it in their traces.
	Specs []Spec `json:"specs"`
	// Unexercised name the rule but never showed it.
	Unexercised []Spec     `json:"unexercised,omitempty"`
	Scenarios   []Scenario `json:"scenarios"`
	Covered     bool       `json:"covered"`
}

// Spec is a spec that shows a rule, with how often its trace did.
type Spec struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	Verdict   string `json:"verdict"` // the spec's own verdict
	Instances int    `json:"instances"`
}

// Scenario is a Gherkin scenario tagged with a rule.
type Scenario struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Status is passed, failed, skipped, or unknown (not in the cucumber
	// report, or no report).
	Status string `json:"status"`
}

// Sources are what coverage is built from.
type Sources struct {
	Results     []runner.Result // the library, run
	FeaturesDir string          // Gherkin features (none: no scenarios)
	BDDReport   string          // cucumber JSON of the features' run (optional)
}

// Table is the coverage of every rule of the catalogue.
type Table struct {
	Rules []Rule
	// HaveScenarios and HaveResults say whether features were found and
	// whether their results were known.
	HaveScenarios, HaveResults bool
}

// Build maps every rule to what shows it. A rule is covered when some
// spec's trace exercised it and held (pass, never because a spec names it)
// or a scenario tagged with it passed.
func Build(src Sources) (Table, error) {
	scenarios, err := readScenarios(src.FeaturesDir)
	if err != nil {
		return Table{}, err
	}
	var statuses map[string][]cucumberResult
	if src.BDDReport != "" {
		if _, err := os.Stat(src.BDDReport); err == nil {
			if statuses, err = readCucumber(src.BDDReport); err != nil {
				return Table{}, err
			}
		}
	}
	t := Table{HaveScenarios: len(scenarios) > 0, HaveResults: statuses != nil}
	for _, r := range rules.All() {
		rc := Rule{ID: r.ID, Family: r.Family, Text: r.Text, Specs: []Spec{}, Scenarios: []Scenario{}}
		for _, res := range src.Results {
			sp := Spec{Name: res.Spec.Name, File: res.Spec.File, Verdict: string(res.Verdict())}
			for _, rr := range res.Rules {
				if rr.Rule != r.ID {
					continue
				}
				sp.Instances = rr.Instances
				switch {
				case rr.Verdict == check.Pass:
					rc.Specs = append(rc.Specs, sp)
					rc.Covered = true
				case slices.Contains(res.Unexercised, r.ID):
					rc.Unexercised = append(rc.Unexercised, sp)
				}
			}
		}
		for _, sc := range scenarios {
			if !slices.Contains(sc.tags, "@"+r.ID) {
				continue
			}
			sc.Status = scenarioStatus(statuses, sc.Scenario)
			rc.Scenarios = append(rc.Scenarios, sc.Scenario)
			rc.Covered = rc.Covered || sc.Status == "passed"
		}
		t.Rules = append(t.Rules, rc)
	}
	return t, nil
}

// Missing lists the rules nothing covers.
func (t Table) Missing() []string {
	var out []string
	for _, rc := range t.Rules {
		if !rc.Covered {
			out = append(out, rc.ID)
		}
	}
	return out
}

// WriteJSON writes the table as an indented JSON array.
func (t Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(t.Rules)
}

// WriteText writes the table for people; featuresDir names where scenarios
// were looked for.
func (t Table) WriteText(w io.Writer, featuresDir string) {
	covered := 0
	for _, rc := range t.Rules {
		fmt.Fprintf(w, "%-7s %s\n", rc.ID, rc.Text)
		var specs []string
		for _, s := range rc.Specs {
			specs = append(specs, fmt.Sprintf("%s (%d examined)", s.Name, s.Instances))
		}
		fmt.Fprintf(w, "        specs:     %s\n", orNone(specs, "none"))
		if len(rc.Unexercised) > 0 {
			var names []string
			for _, s := range rc.Unexercised {
				names = append(names, s.Name)
			}
			fmt.Fprintf(w, "        named, never exercised: %s\n", strings.Join(names, ", "))
		}
		var scs []string
		for _, s := range rc.Scenarios {
			scs = append(scs, fmt.Sprintf("%s:%d %q (%s)", s.File, s.Line, s.Name, s.Status))
		}
		none := "none"
		if !t.HaveScenarios {
			none = "no scenarios (no " + featuresDir + "/*.feature)"
		}
		fmt.Fprintf(w, "        scenarios: %s\n", orNone(scs, none))
		if rc.Covered {
			covered++
			fmt.Fprintln(w, "        covered")
		} else {
			fmt.Fprintln(w, "        NOT COVERED: no spec's trace held it and no scenario tagged with it passed")
		}
	}
	fmt.Fprintf(w, "\n%d rules: %d covered, %d not covered", len(t.Rules), covered, len(t.Rules)-covered)
	if t.HaveScenarios && !t.HaveResults {
		fmt.Fprint(w, " (scenario results unknown: run 'make bdd-report')")
	}
	fmt.Fprintln(w)
}

// WriteMarkdown writes the table as a Markdown table.
func (t Table) WriteMarkdown(w io.Writer) {
	fmt.Fprintln(w, "| rule | requires | specs that held it | scenarios | covered |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, rc := range t.Rules {
		var specs, scs []string
		for _, s := range rc.Specs {
			specs = append(specs, fmt.Sprintf("`%s` (%d)", s.Name, s.Instances))
		}
		for _, s := range rc.Scenarios {
			scs = append(scs, fmt.Sprintf("%s (%s)", s.Name, s.Status))
		}
		yes := "yes"
		if !rc.Covered {
			yes = "**no**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", rc.ID, cell(rc.Text), cell(orNone(specs, "")), cell(orNone(scs, "")), yes)
	}
}

func orNone(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

// scenario is a Gherkin scenario with all its tags (its own, its rule's,
// its feature's and its examples').
type scenario struct {
	Scenario
	tags []string
}

// readScenarios parses dir/*.feature; a missing dir has no scenarios.
func readScenarios(dir string) ([]scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.feature"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []scenario
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		doc, err := parseFeature(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		if doc.Feature == nil {
			continue
		}
		add := func(sc *gherkinScenario, inherited []string) {
			tags := append(slices.Clone(inherited), tagNames(sc.Tags)...)
			for _, ex := range sc.Examples {
				tags = append(tags, tagNames(ex.Tags)...)
			}
			out = append(out, scenario{Scenario{Name: sc.Name, File: f, Line: sc.Location.Line}, tags})
		}
		featureTags := tagNames(doc.Feature.Tags)
		for _, ch := range doc.Feature.Children {
			switch {
			case ch.Scenario != nil:
				add(ch.Scenario, featureTags)
			case ch.Rule != nil:
				ruleTags := append(slices.Clone(featureTags), tagNames(ch.Rule.Tags)...)
				for _, rch := range ch.Rule.Children {
					if rch.Scenario != nil {
						add(rch.Scenario, ruleTags)
					}
				}
			}
		}
	}
	return out, nil
}

// The parts of a Gherkin document rules reads. They are read back from
// the parser's messages as JSON, so that this file depends on the parser
// only, not on the messages package's types.
type gherkinDocument struct {
	Feature *struct {
		Tags     []gherkinTag `json:"tags"`
		Children []struct {
			Scenario *gherkinScenario `json:"scenario"`
			Rule     *struct {
				Tags     []gherkinTag `json:"tags"`
				Children []struct {
					Scenario *gherkinScenario `json:"scenario"`
				} `json:"children"`
			} `json:"rule"`
		} `json:"children"`
	} `json:"feature"`
}

type gherkinScenario struct {
	Name     string       `json:"name"`
	Tags     []gherkinTag `json:"tags"`
	Location struct {
		Line int `json:"line"`
	} `json:"location"`
	Examples []struct {
		Tags []gherkinTag `json:"tags"`
	} `json:"examples"`
}

type gherkinTag struct {
	Name string `json:"name"`
}

func tagNames(tags []gherkinTag) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.Name
	}
	return out
}

// parseFeature parses one feature file, turning a parser panic into an
// error: bad input must never take the command down.
func parseFeature(data []byte) (doc gherkinDocument, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot parse: %v", r)
		}
	}()
	n := 0
	parsed, err := gherkin.ParseGherkinDocument(bytes.NewReader(data), func() string { n++; return strconv.Itoa(n) })
	if err != nil {
		return doc, err
	}
	b, err := json.Marshal(parsed)
	if err != nil {
		return doc, err
	}
	err = json.Unmarshal(b, &doc)
	return doc, err
}

// cucumberResult is one scenario run of a cucumber JSON report.
type cucumberResult struct{ name, status string }

// scenarioStatus is the worst status of the runs of sc in a cucumber
// report, matched by file name and scenario name; an outline's <param>
// matches whatever godog put in its place. "unknown" when none matches.
func scenarioStatus(byFile map[string][]cucumberResult, sc Scenario) string {
	pattern := "^" + placeholder.ReplaceAllString(regexp.QuoteMeta(sc.Name), ".*") + "$"
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "unknown"
	}
	st := "unknown"
	for _, r := range byFile[filepath.Base(sc.File)] {
		if r.name == sc.Name || re.MatchString(r.name) {
			st = worse(st, r.status)
		}
	}
	return st
}

// placeholder is an outline parameter after regexp.QuoteMeta.
var placeholder = regexp.MustCompile(`<[^<>]*>`)

func worse(a, b string) string {
	rank := map[string]int{"unknown": 0, "passed": 1, "skipped": 2, "failed": 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// cucumberFeature is the part of a cucumber JSON report rules reads.
type cucumberFeature struct {
	URI      string `json:"uri"`
	Elements []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Steps []struct {
			Result struct {
				Status string `json:"status"`
			} `json:"result"`
		} `json:"steps"`
	} `json:"elements"`
}

// readCucumber reads the status of each scenario from a cucumber JSON
// report: passed when every step of every run of it passed, failed when a
// step failed, was undefined or ambiguous, skipped otherwise.
func readCucumber(path string) (map[string][]cucumberResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var features []cucumberFeature
	if err := json.Unmarshal(data, &features); err != nil {
		return nil, fmt.Errorf("%s: not a cucumber JSON report: %v", path, err)
	}
	out := map[string][]cucumberResult{}
	for _, f := range features {
		for _, el := range f.Elements {
			if el.Type == "background" {
				continue
			}
			st := "passed"
			for _, s := range el.Steps {
				switch s.Result.Status {
				case "passed":
				case "failed", "undefined", "ambiguous":
					st = "failed"
				default:
					st = worse(st, "skipped")
				}
			}
			file := filepath.Base(f.URI)
			out[file] = append(out[file], cucumberResult{el.Name, st})
		}
	}
	return out, nil
}
