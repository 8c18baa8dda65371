package rules

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const rulesMD = "../../shared/spec/RULES.md"

// The catalogue must name exactly the rules of RULES.md, no more, no fewer.
func TestCatalogueMatchesRulesMD(t *testing.T) {
	b, err := os.ReadFile(rulesMD)
	if os.IsNotExist(err) {
		t.Skipf("%s is not present in this checkout; cannot compare the ID sets", rulesMD)
	}
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`(?m)^- \*\*([A-Z]+-[0-9]+)\*\*`).FindAllStringSubmatch(string(b), -1)
	want := map[string]bool{}
	for _, m := range ids {
		want[m[1]] = true
	}
	if len(want) != 69 {
		t.Errorf("RULES.md defines %d rule IDs, this test expects 69", len(want))
	}
	got := map[string]bool{}
	for _, r := range All() {
		got[r.ID] = true
	}
	for id := range want {
		if !got[id] {
			t.Errorf("%s is in RULES.md but not in the catalogue", id)
		}
	}
	for id := range got {
		if !want[id] {
			t.Errorf("%s is in the catalogue but not in RULES.md", id)
		}
	}
}

func TestCatalogueShape(t *testing.T) {
	all := All()
	if len(all) != 69 {
		t.Fatalf("All() has %d rules, want 69", len(all))
	}
	seen := map[string]bool{}
	lastFamily := -1
	for _, r := range all {
		if seen[r.ID] {
			t.Errorf("%s appears twice", r.ID)
		}
		seen[r.ID] = true
		fi := slices.Index(Families(), r.Family)
		if fi < 0 || !strings.HasPrefix(r.ID, r.Family+"-") {
			t.Errorf("%s has family %q", r.ID, r.Family)
		}
		if fi < lastFamily {
			t.Errorf("%s is out of family order", r.ID)
		}
		lastFamily = fi
		if strings.TrimSpace(r.Text) == "" {
			t.Errorf("%s has no text", r.ID)
		}
		if got, ok := Lookup(r.ID); !ok || got != r {
			t.Errorf("Lookup(%s) = %v, %v", r.ID, got, ok)
		}
	}
	want := []string{"API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR", "LCX", "SVC", "AGT", "RPV"}
	if !slices.Equal(Families(), want) {
		t.Errorf("Families() = %v, want %v", Families(), want)
	}
	if _, ok := Lookup("PC-9"); ok {
		t.Error("Lookup(PC-9) found a rule that does not exist")
	}
}

// Texts are our own words: none repeats a sentence of RULES.md verbatim.
func TestTextsAreRestated(t *testing.T) {
	b, err := os.ReadFile(rulesMD)
	if err != nil {
		t.Skipf("%s not readable: %v", rulesMD, err)
	}
	md := strings.Join(strings.Fields(string(b)), " ")
	for _, r := range All() {
		if strings.Contains(md, r.Text) {
			t.Errorf("%s text is copied from RULES.md: %q", r.ID, r.Text)
		}
	}
}

func TestLess(t *testing.T) {
	ids := []string{"EXPECT", "CB-10", "API-2", "CB-2", "RPV-1", "API-10"}
	slices.SortFunc(ids, func(a, b string) int {
		if Less(a, b) {
			return -1
		}
		if Less(b, a) {
			return 1
		}
		return 0
	})
	want := []string{"API-2", "API-10", "CB-2", "CB-10", "RPV-1", "EXPECT"}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %v, want %v", ids, want)
	}
}

var update = flag.Bool("update", false, "rewrite docs/rules.md")

// docs/rules.md is what WriteMarkdown writes: the catalogue in the
// repository, never out of step with the code.
func TestRulesDocIsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	const path = "../docs/rules.md"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./rules -update", err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is out of date: run go test ./rules -update", path)
	}
	for _, f := range Families() {
		if familyNames[f] == "" {
			t.Errorf("family %s has no name for the document", f)
		}
	}
}
