package steps

import (
	"flag"
	"os"
	"regexp"
	"runtime"
	"slices"
	"testing"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/rules"
)

// opts are the suite's options; -godog.format, -godog.tags and the other
// -godog.* flags of `go test` override them (see the Makefile's bdd and
// bdd-report targets). godog.BindFlags binds them to the standard flag set,
// which `go test` parses, so single-dash flags work as the Makefile writes
// them (BindCommandLineFlags binds to pflag, which would need a second
// parse and double dashes).
var opts = godog.Options{
	Format:      "progress",
	Paths:       []string{"../features"},
	Strict:      true,
	Concurrency: max(runtime.NumCPU(), 4),
	Tags:        "~@wip",
}

func init() { godog.BindFlags("godog.", flag.CommandLine, &opts) }

func TestFeatures(t *testing.T) {
	o := opts
	o.TestingT = t
	suite := godog.TestSuite{Name: "kernel-replay", ScenarioInitializer: InitializeScenario, Options: &o}
	if suite.Run() != 0 {
		t.Fatal("the conformance features failed")
	}
}

var (
	ruleTag    = regexp.MustCompile(`@([A-Z]+-\d+)\b`)
	faultStep  = regexp.MustCompile(`planted faults? ([a-z_, ]+)`)
	featureDir = "../features"
)

// TestEveryFaultPlanted keeps the features a fault matrix: every fault the
// reference engine can plant appears in at least one scenario.
func TestEveryFaultPlanted(t *testing.T) {
	planted := map[string]bool{}
	files, err := os.ReadDir(featureDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(featureDir + "/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range faultStep.FindAllStringSubmatch(string(b), -1) {
			for _, name := range words(m[1]) {
				planted[name] = true
			}
		}
	}
	for _, f := range replay.AllFaults() {
		if !planted[string(f)] {
			t.Errorf("fault %s is planted in no scenario", f)
		}
	}
}

// TestEveryRuleTagged keeps the features complete: every rule of the
// catalogue tags at least one scenario, and no tag names a rule that does
// not exist.
func TestEveryRuleTagged(t *testing.T) {
	tagged := map[string]bool{}
	files, err := os.ReadDir("../features")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile("../features/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ruleTag.FindAllStringSubmatch(string(b), -1) {
			tagged[m[1]] = true
		}
	}
	var ids []string
	for _, r := range rules.All() {
		ids = append(ids, r.ID)
		if !tagged[r.ID] {
			t.Errorf("rule %s tags no scenario", r.ID)
		}
	}
	for id := range tagged {
		if !slices.Contains(ids, id) {
			t.Errorf("tag @%s names no rule of the catalogue", id)
		}
	}
}
