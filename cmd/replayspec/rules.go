package main

import (
	"bytes"
	"context"
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

	"github.com/replayspec/replayspec/internal/simtarget"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/runner"
)

func init() {
	register(command{name: "rules", summary: "every rule with the specs and scenarios that show it, covered or not", run: rulesCmd})
}

var rulesHelp = help{
	name:     "rules",
	synopsis: "[options]",
	about: `Lists every rule of the catalogue: its ID, what it requires, the specs that name it
(their rules: key) with their verdict on the simulator, and the Gherkin scenarios
tagged with it (@PC-3) with their result when a cucumber JSON report exists
(make bdd-report writes out/bdd/features.json). A rule is covered when a spec
that names it passes or a scenario tagged with it passed. Exit status 1 when a
rule is not covered.`,
	examples: []string{
		"replayspec rules",
		"replayspec rules --format markdown > docs/coverage.md",
		"make bdd-report && replayspec rules --format json | jq '.[] | select(.covered | not)'",
	},
}

// ruleCoverage is one rule and what shows it. JSON field names are stable.
type ruleCoverage struct {
	ID        string             `json:"id"`
	Family    string             `json:"family"`
	Text      string             `json:"text"`
	Specs     []specCoverage     `json:"specs"`
	Scenarios []scenarioCoverage `json:"scenarios"`
	Covered   bool               `json:"covered"`
}

type specCoverage struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	Verdict string `json:"verdict"`
}

type scenarioCoverage struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Status is passed, failed, skipped, or unknown (not in the cucumber
	// report, or no report).
	Status string `json:"status"`
}

func rulesCmd(args []string, stdout, stderr io.Writer) int {
	fset := newFlags(rulesHelp.name)
	format := fset.String("format", "text", "output format: text, json or markdown")
	featuresDir := fset.String("features", "features", "directory of Gherkin `DIR/*.feature` files")
	specsDir := fset.String("specs", "specs", "directory of `DIR/*.yaml` specs, run on the simulator")
	bddReport := fset.String("bdd-report", filepath.Join("out", "bdd", "features.json"), "cucumber JSON `FILE` with the scenarios' results (optional)")
	rest, code, ok := parseFlags(fset, rulesHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "rules", "unexpected argument %q: use --specs DIR and --features DIR", rest[0])
	}
	if err := checkFormat(*format, []string{"text", "json", "markdown"}); err != nil {
		return usageError(stderr, "rules", "--format: %v", err)
	}

	specs, err := runner.Collect([]string{*specsDir})
	if err != nil {
		return inputError(stderr, "rules", err, "Name the spec library with --specs DIR (default specs/), and fix the specs ('replayspec validate DIR').")
	}
	results := runner.RunAll(context.Background(), specs, runner.Options{Target: simtarget.Sim{}}, nil)

	scenarios, err := readScenarios(*featuresDir)
	if err != nil {
		return inputError(stderr, "rules", err, "Fix the feature file, or point --features at the right directory.")
	}
	var statuses map[string][]cucumberResult
	if _, err := os.Stat(*bddReport); err == nil {
		if statuses, err = readCucumber(*bddReport); err != nil {
			return inputError(stderr, "rules", err, "Regenerate it with 'make bdd-report', or point --bdd-report elsewhere.")
		}
	}

	var table []ruleCoverage
	for _, r := range rules.All() {
		rc := ruleCoverage{ID: r.ID, Family: r.Family, Text: r.Text, Specs: []specCoverage{}, Scenarios: []scenarioCoverage{}}
		for _, res := range results {
			if slices.Contains(res.Spec.Rules, r.ID) {
				v := string(res.Verdict())
				rc.Specs = append(rc.Specs, specCoverage{Name: res.Spec.Name, File: res.Spec.File, Verdict: v})
				rc.Covered = rc.Covered || v == "pass"
			}
		}
		for _, sc := range scenarios {
			if !slices.Contains(sc.tags, "@"+r.ID) {
				continue
			}
			st := scenarioStatus(statuses, sc.scenarioCoverage)
			sc.Status = st
			rc.Scenarios = append(rc.Scenarios, sc.scenarioCoverage)
			rc.Covered = rc.Covered || st == "passed"
		}
		table = append(table, rc)
	}

	var missing []string
	for _, rc := range table {
		if !rc.Covered {
			missing = append(missing, rc.ID)
		}
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(table); err != nil {
			return exitUsage
		}
	case "markdown":
		writeRulesMarkdown(stdout, table)
	default:
		writeRulesText(stdout, table, len(scenarios) > 0, statuses != nil, *featuresDir)
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "replayspec rules: %d of %d rules are not covered (no passing spec or scenario): %s\n",
			len(missing), len(table), strings.Join(missing, ", "))
		if statuses == nil && len(scenarios) > 0 {
			fmt.Fprintf(stderr, "Scenario results are unknown: run 'make bdd-report' to write %s.\n", *bddReport)
		}
		return exitFail
	}
	return exitOK
}

func writeRulesText(w io.Writer, table []ruleCoverage, haveScenarios, haveResults bool, featuresDir string) {
	covered := 0
	for _, rc := range table {
		fmt.Fprintf(w, "%-7s %s\n", rc.ID, rc.Text)
		var specs []string
		for _, s := range rc.Specs {
			specs = append(specs, s.Name+" ("+s.Verdict+")")
		}
		fmt.Fprintf(w, "        specs:     %s\n", orNone(specs, "none"))
		var scs []string
		for _, s := range rc.Scenarios {
			scs = append(scs, fmt.Sprintf("%s:%d %q (%s)", s.File, s.Line, s.Name, s.Status))
		}
		none := "none"
		if !haveScenarios {
			none = "no scenarios (no " + featuresDir + "/*.feature)"
		}
		fmt.Fprintf(w, "        scenarios: %s\n", orNone(scs, none))
		if rc.Covered {
			covered++
			fmt.Fprintln(w, "        covered")
		} else {
			fmt.Fprintln(w, "        NOT COVERED: no passing spec or scenario")
		}
	}
	fmt.Fprintf(w, "\n%d rules: %d covered, %d not covered", len(table), covered, len(table)-covered)
	if haveScenarios && !haveResults {
		fmt.Fprint(w, " (scenario results unknown: run 'make bdd-report')")
	}
	fmt.Fprintln(w)
}

func writeRulesMarkdown(w io.Writer, table []ruleCoverage) {
	fmt.Fprintln(w, "| rule | requires | specs | scenarios | covered |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, rc := range table {
		var specs, scs []string
		for _, s := range rc.Specs {
			specs = append(specs, fmt.Sprintf("`%s` (%s)", s.Name, s.Verdict))
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
	scenarioCoverage
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
			out = append(out, scenario{scenarioCoverage{Name: sc.Name, File: f, Line: sc.Location.Line}, tags})
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
func scenarioStatus(byFile map[string][]cucumberResult, sc scenarioCoverage) string {
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
