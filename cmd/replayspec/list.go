package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{name: "list", summary: "list specs with the rules each shows", run: listCmd})
}

var listHelp = help{
	name:     "list",
	synopsis: "[DIR|SPEC...]",
	about: `Lists specs, one a line: name, the rules it shows (its rules: key) and its file. With no
argument, the built-in library (what 'replayspec run' runs with none).`,
	examples: []string{
		"replayspec list",
		"replayspec list specs/ | grep PC-3",
	},
}

func listCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(listHelp.name)
	maxCases := fs.Int64("max-cases", spec.DefaultMaxCases, "refuse a spec whose matrix stands for more than `N` cases (counted before any is made)")
	paths, code, ok := parseFlags(fs, listHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if *maxCases < 1 {
		return usageError(stderr, "list", "--max-cases takes a positive number")
	}
	spec.SetMaxCases(*maxCases)
	defer spec.SetMaxCases(0)
	specs, err := loadSpecs(ctx, paths, spec.MaxBytes)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, s := range specs {
		rules := strings.Join(s.Rules, ",")
		if rules == "" {
			rules = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", report.Name(s.Name), report.Name(rules), report.Name(s.File))
	}
	tw.Flush()
	if err != nil {
		return inputError(stderr, "list", err, loadHint(err))
	}
	return exitOK
}
