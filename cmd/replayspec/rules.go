package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/replayspec/replayspec/internal/coverage"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target/sim"
)

// defaultBDDReport is where make bdd-report writes the cucumber JSON.
var defaultBDDReport = filepath.Join("out", "bdd", "features.json")

func init() {
	register(command{name: "rules", summary: "every rule with the specs and scenarios that show it, covered or not", run: rulesCmd})
}

var rulesHelp = help{
	name:     "rules",
	synopsis: "[options]",
	about: `Lists every rule of the catalogue: its ID, what it requires, the library specs
whose traces exercised it and held (counted by the oracles, on the simulator;
a spec's rules: list credits nothing), the specs that name it but never
exercised it, and the Gherkin scenarios tagged with it (@PC-3) with their
result when a cucumber JSON report exists (make bdd-report writes
out/bdd/features.json). A rule is covered when some spec's trace held it or a
scenario tagged with it passed. Exit status 1 when a rule is not covered.`,
	examples: []string{
		"replayspec rules",
		"replayspec rules --format markdown > docs/coverage.md",
		"make bdd-report && replayspec rules --format json | jq '.[] | select(.covered | not)'",
	},
}

func rulesCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fset := newFlags(rulesHelp.name)
	format := fset.String("format", "text", "output format: text, json or markdown")
	featuresDir := fset.String("features", "features", "directory of Gherkin `DIR/*.feature` files")
	specsDir := fset.String("specs", "", "directory of `DIR/*.yaml` specs to run on the simulator (default: the built-in library)")
	bddReport := fset.String("bdd-report", defaultBDDReport, "cucumber JSON `FILE` with the scenarios' results (optional)")
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
	lib, err := librarySpecs(*specsDir)
	if err != nil {
		return inputError(stderr, "rules", err, "Fix the specs ('replayspec validate DIR'), or name another library with --specs DIR.")
	}
	results := runner.RunAll(ctx, lib, runner.Options{Target: simtarget.Sim{}}, nil)
	table, err := coverage.Build(coverage.Sources{Results: results, FeaturesDir: *featuresDir, BDDReport: *bddReport})
	if err != nil {
		return inputError(stderr, "rules", err, "Fix the feature file or the cucumber report (make bdd-report), or point --features and --bdd-report elsewhere.")
	}
	switch *format {
	case "json":
		if err := table.WriteJSON(stdout); err != nil {
			return exitUsage
		}
	case "markdown":
		table.WriteMarkdown(stdout)
	default:
		table.WriteText(stdout, *featuresDir)
	}
	if missing := table.Missing(); len(missing) > 0 {
		fmt.Fprintf(stderr, "replayspec rules: %d of %d rules are not covered (no spec's trace held them, no scenario tagged with them passed): %s\n",
			len(missing), len(table.Rules), strings.Join(missing, ", "))
		if table.HaveScenarios && !table.HaveResults {
			// make bdd-report writes the default path only: point at it, or
			// at how to write the path given.
			if filepath.Clean(*bddReport) == defaultBDDReport {
				fmt.Fprintf(stderr, "Scenario results are unknown: run 'make bdd-report' to write %s.\n", defaultBDDReport)
			} else {
				abs, _ := filepath.Abs(*bddReport) // go test runs in ./steps
				fmt.Fprintf(stderr, "Scenario results are unknown: %s does not exist. Write it from the repository root with 'go test ./steps -run TestFeatures -godog.format=cucumber:%s', or run 'make bdd-report' and leave out --bdd-report (it writes %s).\n",
					*bddReport, abs, defaultBDDReport)
			}
		}
		return exitFail
	}
	return exitOK
}

// librarySpecs is the built-in library, or the specs of dir when given.
func librarySpecs(dir string) ([]spec.Spec, error) {
	if dir == "" {
		return specs.Library()
	}
	return runner.Collect([]string{dir})
}
