package rules

import (
	"fmt"
	"io"
	"strings"
)

// familyNames says what each family is about, for the rule document.
var familyNames = map[string]string{
	"API": "the surface", "ACT": "activation", "CB": "callback order and threading",
	"UD": "user data", "PC": "the pass-count table", "CONT": "the continue decision",
	"MEM": "snapshot and restore", "DID": "dispatch identity", "CMP": "completion",
	"COR": "correlation ids", "LCX": "localized context control", "SVC": "services under replay",
	"AGT": "agents", "RPV": "rocprofv3",
}

// WriteMarkdown writes the catalogue as docs/rules.md: every rule in the
// project's words, by family. TestRulesDocIsCurrent keeps the file equal
// to what this writes.
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# The rules\n\n")
	b.WriteString("Every rule replayspec judges, with a stable ID, in this project's own words. Generated from\n")
	b.WriteString("the `rules` package (`go test ./rules -update` rewrites this file). The behaviour is that of\n")
	b.WriteString("the experimental kernel replay callback API of rocprofiler-sdk and its rocprofv3 integration;\n")
	b.WriteString("the original description is in the public rocprofiler-sdk project\n")
	b.WriteString("(`projects/rocprofiler-sdk/` of the ROCm systems repository, the kernel replay pages of its\n")
	b.WriteString("documentation).\n")
	family := ""
	for _, r := range catalogue {
		if r.Family != family {
			family = r.Family
			fmt.Fprintf(&b, "\n## %s: %s\n\n", family, familyNames[family])
		}
		fmt.Fprintf(&b, "- **%s** %s.\n", r.ID, strings.ToUpper(r.Text[:1])+r.Text[1:])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
