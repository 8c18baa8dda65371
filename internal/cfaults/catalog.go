package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/rules"
)

// Kind tells the two sets of faults apart.
type Kind string

const (
	// Switch is a KRS_FAULT_* switch compiled into the port's own source
	// (sdk/faults.h): the reference engine's planted faults, carried over.
	Switch Kind = "switch"
	// Patch is a port author's bug written as a diff against ports/c
	// (faults/NAME.patch), applied to a copy of the port.
	Patch Kind = "patch"
)

// Fault is one fault of the matrix: what it is and the rules it breaks.
type Fault struct {
	Name   string
	Kind   Kind
	Title  string   // one line: what the bug is
	Breaks []string // the rules it breaks, by ID
	File   string   // the patch file (patches only)
	Diff   string   // the patch text from its first diff line (patches only)
	Files  []string // the files the patch changes, relative to ports/c
}

// switchLine is a row of the table in sdk/faults.h's comment: a star, three
// spaces, the name, what it plants and the rules it breaks ("RULE-1, RULE-2").
var switchLine = regexp.MustCompile(`^ \*   ([A-Z][A-Z_]*)\s+(.*?\S)\s+([A-Z]+-[0-9]+(?:, [A-Z]+-[0-9]+)*)\s*$`)

// switchUse is a switch as the sources test it.
var switchUse = regexp.MustCompile(`KRS_FAULT_([A-Z][A-Z_]*)`)

// readSwitches reads the switch table of sdk/faults.h and checks it
// against the sources: every switch a source tests is in the table, and
// every row of the table is tested somewhere.
func readSwitches(portDir string) ([]Fault, error) {
	header := filepath.Join(portDir, "sdk", "faults.h")
	text, err := os.ReadFile(header)
	if err != nil {
		return nil, err
	}
	var out []Fault
	listed := map[string]bool{}
	for i, line := range strings.Split(string(text), "\n") {
		m := switchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := Fault{Name: m[1], Kind: Switch, Title: m[2], Breaks: strings.Split(m[3], ", ")}
		if err := checkRules(f.Breaks); err != nil {
			return nil, fmt.Errorf("%s:%d: switch %s: %v", header, i+1, f.Name, err)
		}
		if listed[f.Name] {
			return nil, fmt.Errorf("%s:%d: switch %s is listed twice", header, i+1, f.Name)
		}
		listed[f.Name] = true
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no switch table found (rows like ' *   NAME  what  RULE-1, RULE-2')", header)
	}
	used, err := switchesUsed(portDir)
	if err != nil {
		return nil, err
	}
	for name, where := range used {
		if !listed[name] {
			return nil, fmt.Errorf("%s tests KRS_FAULT_%s, which %s does not list: add a row (what it plants, the rules it breaks)", where, name, header)
		}
	}
	for _, f := range out {
		if _, ok := used[f.Name]; !ok {
			return nil, fmt.Errorf("%s lists %s, which no source under %s tests: remove the row", header, f.Name, portDir)
		}
	}
	return out, nil
}

// switchesUsed maps each switch a C source or header tests (faults.h's own
// table aside) to the first file that does.
func switchesUsed(portDir string) (map[string]string, error) {
	used := map[string]string{}
	for _, dir := range sourceDirs {
		files, err := filepath.Glob(filepath.Join(portDir, dir, "*.[ch]"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if filepath.Base(f) == "faults.h" {
				continue
			}
			text, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			for _, m := range switchUse.FindAllStringSubmatch(string(text), -1) {
				if m[1] == "NAME" { // the driver's name, not a fault
					continue
				}
				if _, ok := used[m[1]]; !ok {
					used[m[1]] = f
				}
			}
		}
	}
	return used, nil
}

// sourceDirs are the port's source directories, relative to ports/c: what
// a patch may change and what a patched copy holds.
var sourceDirs = []string{"include", "kit", "sdk", "runtime", "port"}

var patchName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// readPatches reads every faults/NAME.patch: a header of '#' lines (first
// "# NAME: what the bug is", then "# Breaks: RULE-1 RULE-2", then why a
// port author writes it), then a unified diff against ports/c.
func readPatches(dir string) ([]Fault, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Fault
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		f, err := parsePatch(strings.TrimSuffix(filepath.Base(file), ".patch"), string(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		f.File = file
		out = append(out, f)
	}
	return out, nil
}

// parsePatch reads one patch file's header and the files its diff changes.
func parsePatch(name, text string) (Fault, error) {
	f := Fault{Name: name, Kind: Patch}
	if !patchName.MatchString(name) {
		return f, fmt.Errorf("the name %q is not lower-case words joined by '-'", name)
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	inDiff := false
	var diff strings.Builder
	for sc.Scan() {
		line := sc.Text()
		n++
		if !inDiff && strings.HasPrefix(line, "diff --git ") {
			inDiff = true
		}
		if inDiff {
			diff.WriteString(line + "\n")
			if a, ok := strings.CutPrefix(line, "+++ b/"); ok {
				f.Files = append(f.Files, a)
			}
			continue
		}
		body, isComment := strings.CutPrefix(line, "#")
		if !isComment {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return f, fmt.Errorf("line %d: the header is '#' lines, then the diff ('diff --git a/... b/...'): %q", n, line)
		}
		body = strings.TrimSpace(body)
		switch {
		case n == 1:
			title, ok := strings.CutPrefix(body, name+":")
			if !ok || strings.TrimSpace(title) == "" {
				return f, fmt.Errorf("line 1: want '# %s: what the bug is', got %q", name, line)
			}
			f.Title = strings.TrimSpace(title)
		case strings.HasPrefix(body, "Breaks:"):
			f.Breaks = strings.Fields(strings.TrimPrefix(body, "Breaks:"))
			if err := checkRules(f.Breaks); err != nil {
				return f, fmt.Errorf("line %d: %v", n, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return f, err
	}
	switch {
	case f.Title == "":
		return f, fmt.Errorf("no header: the first line is '# %s: what the bug is'", name)
	case len(f.Breaks) == 0:
		return f, fmt.Errorf("no '# Breaks: RULE-1 RULE-2' line: which rules does the bug break?")
	case len(f.Files) == 0:
		return f, fmt.Errorf("no diff: the header is followed by a 'git diff --relative=ports/c' of the bug")
	}
	for _, file := range f.Files {
		dir, _, _ := strings.Cut(file, "/")
		if !slices.Contains(sourceDirs, dir) || strings.Contains(file, "..") {
			return f, fmt.Errorf("the diff changes %s: a patch changes the port's sources only (%s, relative to ports/c)", file, strings.Join(sourceDirs, ", "))
		}
	}
	f.Diff = diff.String()
	return f, nil
}

// checkRules requires every ID to be a rule of the catalogue.
func checkRules(ids []string) error {
	if len(ids) == 0 {
		return fmt.Errorf("no rules")
	}
	for _, id := range ids {
		if _, ok := rules.Lookup(id); !ok {
			return fmt.Errorf("%q is not a rule of RULES.md", id)
		}
	}
	return nil
}
