package main

import (
	"fmt"
	"io"

	"github.com/replayspec/replayspec/spec"
)

func init() {
	register(command{name: "validate", summary: "check spec files against the format, without running them", run: validateCmd})
}

var validateHelp = help{
	name:     "validate",
	synopsis: "SPEC|DIR...",
	about: `Loads each spec (a YAML file, or every *.yaml file of a directory) and checks it
against the format: unknown keys, wrong types and impossible values are reported
as FILE:LINE:COL: PATH: what is wrong (allowed: ...). Nothing runs.
Prints "ok FILE" for each good spec.`,
	examples: []string{
		"replayspec validate specs/",
		"replayspec validate my-spec.yaml",
	},
}

func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(validateHelp.name)
	paths, code, ok := parseFlags(fs, validateHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		return usageError(stderr, "validate", "no spec given: name spec files or directories, e.g. replayspec validate specs/")
	}
	files, err := specFiles(paths)
	if err != nil {
		return inputError(stderr, "validate", err, "Name an existing spec file or a directory of *.yaml specs.")
	}
	bad := 0
	for _, f := range files {
		cases, err := spec.LoadCases(f)
		if err != nil {
			bad++
			fmt.Fprintln(stdout, err)
			continue
		}
		if cases[0].Case != nil {
			fmt.Fprintf(stdout, "ok %s (%d cases)\n", f, len(cases))
			continue
		}
		fmt.Fprintf(stdout, "ok %s\n", f)
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "replayspec validate: %d of %d specs have errors; docs/spec-format.md lists every key\n", bad, len(files))
		return exitUsage
	}
	return exitOK
}
