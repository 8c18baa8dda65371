package driver

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/trace"
)

var updateDocs = flag.Bool("update", false, "rewrite the profile table of docs/compliance.md")

// profileTable is the table docs/compliance.md holds: for each judged rule
// the sources its oracle needs and the profiles that can judge it.
func profileTable() string {
	var b strings.Builder
	b.WriteString("| rule | sources its oracle needs (any one line) | black-box | runtime | full |\n")
	b.WriteString("| --- | --- | :-: | :-: | :-: |\n")
	reg := check.Registry()
	can := map[string]map[string]bool{}
	for _, p := range Profiles {
		judged, _ := Judgeable(p.Sources)
		can[p.Name] = map[string]bool{}
		for _, id := range judged {
			can[p.Name][id] = true
		}
	}
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	for _, id := range check.JudgedRules() {
		var alts []string
		for _, alt := range reg[id] {
			var ss []string
			for _, s := range alt {
				ss = append(ss, string(s))
			}
			alts = append(alts, strings.Join(ss, "+"))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", id, strings.Join(alts, " or "),
			mark(can[ProfileBlackBox][id]), mark(can[ProfileRuntime][id]), mark(can[ProfileFull][id]))
	}
	for _, r := range rules.All() {
		if !strings.Contains(strings.Join(check.JudgedRules(), " "), r.ID) {
			fmt.Fprintf(&b, "| %s | judged on the front end's output files, not on a trace | - | - | - |\n", r.ID)
		}
	}
	return b.String()
}

const (
	tableBegin = "<!-- profile table: go test ./driver -run TestProfileTableDoc -update -->\n"
	tableEnd   = "<!-- end of profile table -->\n"
)

// TestProfileTableDoc keeps docs/compliance.md's table of what each profile
// can judge equal to the oracles' registry.
func TestProfileTableDoc(t *testing.T) {
	const doc = "../docs/compliance.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no profile table between %q and %q", doc, tableBegin, tableEnd)
	}
	want := profileTable()
	if got := s[i+len(tableBegin) : j]; got != want {
		if *updateDocs {
			if err := os.WriteFile(doc, []byte(s[:i+len(tableBegin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s: the profile table is stale (the oracles' registry changed); run go test ./driver -run TestProfileTableDoc -update and review the diff", doc)
	}
}

func TestJudgeable(t *testing.T) {
	all, none := Judgeable(trace.AllSources)
	if len(none) != 0 || len(all) != len(check.JudgedRules()) {
		t.Errorf("every source: %d judged, %v not observable", len(all), none)
	}
	bb, out := Judgeable([]trace.Source{trace.SourceTool, trace.SourceApp})
	if len(bb) == 0 || len(out) == 0 || len(bb)+len(out) != len(all) {
		t.Errorf("black-box: %d judged, %d not", len(bb), len(out))
	}
	for _, id := range out {
		if id == "PC-3" {
			t.Errorf("PC-3 needs only the tool's view, yet black-box cannot judge it")
		}
	}
}

func TestHandshakeSources(t *testing.T) {
	base := Handshake{Protocol: Version, Implementation: Implementation{Name: "p"}}
	cases := []struct {
		hs   func(Handshake) Handshake
		want string // "" ok
		srcs []trace.Source
	}{
		{func(h Handshake) Handshake { return h }, "", trace.AllSources},
		{func(h Handshake) Handshake { h.Profile = ProfileBlackBox; return h }, "", []trace.Source{trace.SourceTool, trace.SourceApp}},
		{func(h Handshake) Handshake {
			h.Profile, h.Sources = ProfileRuntime, []trace.Source{trace.SourceTool, trace.SourceApp, trace.SourceRuntime}
			return h
		}, "", []trace.Source{trace.SourceTool, trace.SourceApp, trace.SourceRuntime}},
		{func(h Handshake) Handshake { h.Profile = "glass-box"; return h }, `unknown profile "glass-box"`, nil},
		{func(h Handshake) Handshake { h.Sources = []trace.Source{"tool", "gpu"}; return h }, `unknown source "gpu"`, nil},
		{func(h Handshake) Handshake { h.Sources = []trace.Source{"tool", "tool"}; return h }, "listed twice", nil},
		{func(h Handshake) Handshake { h.Sources = []trace.Source{"app"}; return h }, `lack "tool"`, nil},
		{func(h Handshake) Handshake {
			h.Profile, h.Sources = ProfileFull, []trace.Source{trace.SourceTool, trace.SourceApp}
			return h
		}, `names profile "full"`, nil},
	}
	for i, c := range cases {
		h := c.hs(base)
		err := h.Check(nil, nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("case %d: %v", i, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("case %d: err = %v, want %q", i, err, c.want)
		case c.want == "" && !SameSources(h.ReportedSources(), c.srcs):
			t.Errorf("case %d: reported %v, want %v", i, h.ReportedSources(), c.srcs)
		}
	}
	if ProfileOf([]trace.Source{trace.SourceApp, trace.SourceTool}) != ProfileBlackBox || ProfileOf([]trace.Source{trace.SourceSDK}) != "" {
		t.Error("ProfileOf")
	}
}
