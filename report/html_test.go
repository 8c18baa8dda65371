package report

import (
	"bytes"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// loop is a trace of one dispatch of n passes on thread 1 (kernels on
// agent 1 queue 1): app dispatch, CONFIG ENTER, snapshot, then each pass
// (restore before all but the first, PASS ENTER, kernel, PASS EXIT),
// CONFIG EXIT, completion, the application's wait returning.
func loop(n int) trace.Trace {
	t := &built{Trace: trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: "loop", Sources: trace.AllSources}}}
	add := t.add
	add(trace.Event{Type: trace.AgentInfo, Agent: 1, Family: trace.FamilyMI300, Label: "gpu0"})
	add(trace.Event{Type: trace.AppDispatch, Thread: 1, Label: "inc", Signal: 1, Kernel: "increment"})
	add(cb(0, 0, 1, 1, trace.OpConfig, trace.PhaseEnter, 0))
	add(trace.Event{Type: trace.Snapshot, Thread: 1, Dispatch: 1, Bytes: 64})
	for p := range uint64(n) {
		if p > 0 {
			add(trace.Event{Type: trace.Restore, Thread: 1, Dispatch: 1, Pass: trace.U64(p), Bytes: 64})
		}
		add(cb(0, 0, 1, 1, trace.OpPass, trace.PhaseEnter, p))
		add(trace.Event{Type: trace.Kernel, Thread: 1, Agent: 1, Queue: 1, Dispatch: 1, Kernel: "increment", Start: t.seq * 10, End: t.seq*10 + 5})
		add(cb(0, 0, 1, 1, trace.OpPass, trace.PhaseExit, p))
	}
	add(cb(0, 0, 1, 1, trace.OpConfig, trace.PhaseExit, 0))
	add(trace.Event{Type: trace.Signal, Thread: 1, Signal: 1, Value: trace.I64(0)})
	add(trace.Event{Type: trace.AppComplete, Thread: 1, Label: "inc", Signal: 1})
	return t.Trace
}

// built is a test trace made an event at a time: add gives each the next
// seq, and a time ten times it.
type built struct {
	trace.Trace
	seq uint64
}

func (b *built) add(e trace.Event) {
	b.seq++
	e.Seq, e.Time = b.seq, b.seq*10
	b.Events = append(b.Events, e)
}

// kernelOf is the kernel event of pass p in loop's trace.
func kernelOf(t trace.Trace, p int) trace.Event {
	for _, e := range t.Events {
		if e.Type == trace.Kernel {
			if p == 0 {
				return e
			}
			p--
		}
	}
	panic("no such pass")
}

// panelsOf draws the timelines of a held trace.
func panelsOf(t *testing.T, tr trace.Trace, cited map[uint64]bool, prefix string) ([]tlPanel, int) {
	t.Helper()
	panels, left, _, err := timelinePanels(EventsOf(tr), cited, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return panels, left
}

func page(t *testing.T, p *HTMLPage) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b, End{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func failing(name string, tr trace.Trace, cited ...trace.Event) JSONResult {
	return JSONResult{Name: name, File: "specs/" + name + ".yaml", Verdict: "fail", Outcome: "failed", Rules: []string{"CMP-1"},
		Passes: Passes(tr), Events: len(tr.Events), ElapsedMS: 1.5,
		Violations: []JSONViolation{{Rule: "CMP-1", Family: "CMP", Requires: "one completion", Message: "completed twice", Dispatch: 1, Label: "inc", Events: cited}},
		Judged:     []JSONRule{{Rule: "CMP-1", Verdict: "fail", Instances: 1}, {Rule: "PC-3", Verdict: "pass", Instances: 2}}}
}

// A failing spec's page: its violation with the rule's text and its cited
// events, each linked to its mark in the dispatch's timeline, which draws
// the window, every pass, every kernel, the snapshot, the restores and
// the completion.
func TestHTMLFailingSpec(t *testing.T) {
	tr := loop(3)
	k := kernelOf(tr, 1)
	p := NewHTMLPage(HTMLOptions{Target: "sim"})
	p.Add(failing("three", tr, k), &tr)
	p.Add(JSONResult{Name: "quiet", Verdict: "pass", Outcome: "passed"}, nil)
	p.Add(JSONResult{Name: "gone", Verdict: "skip", Outcome: "skipped", SkipReason: "needs cuda"}, nil)
	html := page(t, p)
	anchor := "s0-d1-e" + strconv.FormatUint(k.Seq, 10)
	for _, want := range []string{
		`<span class="name">three</span>`, "one completion", "found: completed twice", `href="#` + anchor + `"`,
		`id="` + anchor + `"`, `class="slice win"`, ">pass 0<", ">pass 2<", `class="m snap"`, `class="m restore"`, `class="m done"`,
		`class="m appd"`, `class="m appc"`, "agent 1 (gpu0 MI300) queue 1", `data-status="failed"`,
		`<b>3</b> specs`, "needs cuda",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`<rect class="kernel( cited)?"`).FindAllString(html, -1)); n != 3 {
		t.Errorf("%d kernels drawn, want 3", n)
	}
	if n := strings.Count(html, `class="slice pass`); n != 3 {
		t.Errorf("%d passes drawn, want 3", n)
	}
	// The failing spec is open, the passing one closed.
	if !strings.Contains(html, `id="s0" data-status="failed" data-q="three cmp-1 failed specs/three.yaml">
<details open>`) || strings.Contains(html, `id="s1" data-status="passed" data-q="quiet  passed ">
<details open>`) {
		t.Error("the failing spec should open and the passing one not")
	}
	// A spec with no trace says how to get one.
	if !strings.Contains(html, "no trace at hand") {
		t.Error("a result without its trace should say why there is no timeline")
	}
}

// Every text from outside is escaped: the page holds exactly its own
// script, and no markup from a name, message, label or warning.
func TestHTMLEscapes(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	tr := loop(2)
	for i := range tr.Events {
		if tr.Events[i].Label != "" {
			tr.Events[i].Label = evil
		}
	}
	tr.Events = append(tr.Events, trace.Event{Seq: 999, Type: trace.Warning, Code: "graph_launch", Message: evil, Time: 1})
	r := failing(evil, tr, tr.Events[len(tr.Events)-1])
	r.Violations[0].Message, r.Violations[0].Requires, r.Error, r.File = evil, evil, evil, evil
	r.Rules = []string{evil}
	p := NewHTMLPage(HTMLOptions{Target: evil, Command: evil, XFailFile: evil})
	p.Add(r, &tr)
	html := page(t, p)
	if n := strings.Count(html, "<script"); n != 1 {
		t.Errorf("%d <script in the page, want 1 (its own)", n)
	}
	for _, bad := range []string{"<img", "<script>alert"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile name is not shown escaped")
	}
}

// The page permits its own style and script by hash and no request.
func TestHTMLContentSecurityPolicy(t *testing.T) {
	doc := page(t, NewHTMLPage(HTMLOptions{}))
	m := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no Content-Security-Policy")
	}
	csp := html.UnescapeString(m[1])
	for _, want := range []string{"default-src 'none'", "script-src '" + hashOf(pageJS) + "'", "style-src '" + hashOf(pageCSS) + "'", "img-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the policy %q lacks %q", csp, want)
		}
	}
	// The hashes hold only if the script and style are inserted verbatim.
	if !strings.Contains(doc, "<script>"+pageJS+"</script>") || !strings.Contains(doc, "<style>"+pageCSS+"</style>") {
		t.Error("the page's script or style is not inserted byte for byte: its hash would not match")
	}
	for _, ext := range []string{"http://", "https://", "//fonts", "src=\""} {
		if strings.Contains(doc, ext) {
			t.Errorf("the page refers to %q: it must be self-contained", ext)
		}
	}
}

// A loop of 10,000 passes is folded: its first and last passes and the
// pass holding a cited event are drawn, the rest are in at most a few
// dozen boxes that count every pass, and the picture stays small.
func TestHTMLFoldsLongLoops(t *testing.T) {
	tr := loop(10000)
	k := kernelOf(tr, 5000)
	panels, left := panelsOf(t, tr, map[uint64]bool{k.Seq: true}, "s0")
	if len(panels) != 1 || left != 0 {
		t.Fatalf("%d panels, %d left out; want 1, 0", len(panels), left)
	}
	pn := panels[0]
	if len(pn.Shapes) > 1000 {
		t.Errorf("%d shapes for a 10,000-pass loop: not folded", len(pn.Shapes))
	}
	if !pn.cited[k.Seq] {
		t.Error("the cited kernel of pass 5000 is not drawn")
	}
	drawn := map[string]bool{}
	folds, folded := 0, 0
	re := regexp.MustCompile(`^passes (\d+)-(\d+) folded|^pass (\d+) folded`)
	for _, sh := range pn.Shapes {
		if sh.Kind == "text" && strings.HasPrefix(sh.Label, "pass ") {
			drawn[sh.Label] = true
		}
		if sh.Kind != "fold" {
			continue
		}
		folds++
		m := re.FindStringSubmatch(sh.Title)
		if m == nil {
			t.Fatalf("fold titled %q", sh.Title)
		}
		if m[3] != "" {
			folded++
			continue
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		folded += b - a + 1
	}
	for _, p := range []string{"pass 0", "pass 7", "pass 5000", "pass 9992", "pass 9999"} {
		if !drawn[p] {
			t.Errorf("%s is not drawn", p)
		}
	}
	if drawn["pass 8"] || drawn["pass 9991"] {
		t.Error("a pass that should be folded is drawn")
	}
	if want := 10000 - 16 - 1; folded != want {
		t.Errorf("the folds count %d passes, want %d", folded, want)
	}
	if folds > 2*foldBuckets {
		t.Errorf("%d folds, want at most %d", folds, 2*foldBuckets)
	}
	// A short loop is drawn whole.
	short, _ := panelsOf(t, loop(foldAbove), nil, "s1")
	for _, sh := range short[0].Shapes {
		if sh.Kind == "fold" {
			t.Fatalf("a loop of %d passes is folded", foldAbove)
		}
	}
}

// A trace's pass numbers, whatever they are, never size the work: a loop
// numbered in huge steps is folded like any other.
func TestHTMLHugePassNumbers(t *testing.T) {
	tr := loop(100)
	for i, e := range tr.Events {
		if p, ok := e.PassOf(); ok {
			tr.Events[i].Pass = trace.U64(p<<56 + 1<<40)
		}
	}
	panels, _ := panelsOf(t, tr, nil, "s0")
	folds := 0
	for _, sh := range panels[0].Shapes {
		if sh.Kind == "fold" {
			folds++
		}
	}
	if folds == 0 || len(panels[0].Shapes) > 1000 {
		t.Errorf("%d folds, %d shapes: a loop of 100 passes with huge numbers is not folded", folds, len(panels[0].Shapes))
	}
}

// A window whose EXIT never came is drawn to the end of the picture and
// says so.
func TestHTMLUnclosedWindow(t *testing.T) {
	tr := loop(2)
	for i, e := range tr.Events {
		if e.Type == trace.Callback && e.Op == trace.OpConfig && e.Phase == trace.PhaseExit {
			tr.Events = append(tr.Events[:i:i], tr.Events[i+1:]...)
			break
		}
	}
	panels, _ := panelsOf(t, tr, nil, "s0")
	found := false
	for _, sh := range panels[0].Shapes {
		if strings.Contains(sh.Class, "win") && strings.Contains(sh.Class, "unclosed") {
			found = true
		}
	}
	if !found {
		t.Error("the window without its EXIT is not drawn as unclosed")
	}
}

// Against a baseline, the page lists new failures, fixed cases and flakes;
// against another target's run, where verdicts and the traces differ.
func TestHTMLComparisons(t *testing.T) {
	tr := loop(2)
	base := runner.Baseline{File: "base.csv", Failing: map[string]runner.CaseStatus{"old-bug": runner.CaseFail, "now-fine": runner.CaseFail}}
	other := []JSONResult{
		{Name: "new-bug", Verdict: "pass", Outcome: "passed", Judged: []JSONRule{{Rule: "CMP-1", Verdict: "pass"}}},
		{Name: "now-fine", Verdict: "pass", Outcome: "passed"},
		{Name: "only-there", Verdict: "pass", Outcome: "passed"},
	}
	p := NewHTMLPage(HTMLOptions{Target: "port", Baseline: &base, Compare: &HTMLCompare{Target: "sim", Results: other,
		Divergences: map[string][]HTMLDivergence{"new-bug": {{Dispatch: "inc", Step: 14, Rules: []string{"MEM-2"}, Before: "both-event", A: "port-event", B: "sim-event"}}}}})
	p.Add(failing("new-bug", tr), &tr)
	p.Add(failing("old-bug", tr), &tr)
	p.Add(JSONResult{Name: "now-fine", Verdict: "pass", Outcome: "passed"}, nil)
	p.Add(JSONResult{Name: "flake", Verdict: "pass", Outcome: "flaky", Reason: "failed, then passed on attempt 2"}, nil)
	html := page(t, p)
	sec := func(id string) string {
		i := strings.Index(html, `<section id="`+id+`">`)
		if i < 0 {
			t.Fatalf("no %s section", id)
		}
		return html[i : i+strings.Index(html[i:], "</section>")]
	}
	b := sec("baseline")
	for _, want := range []string{"1 new failures, 1 fixed, 1 still failing, 1 flaky", `New failures</h3><ul class="refs"><li><a href="#s0">new-bug`,
		`Fixed (remove them from the baseline)</h3><ul class="refs"><li><a href="#s2">now-fine`, "failed, then passed on attempt 2"} {
		if !strings.Contains(b, want) {
			t.Errorf("the baseline section lacks %q", want)
		}
	}
	c := sec("compare")
	for _, want := range []string{"port against sim", "5 specs: 4 differ, 1 agree", "inc, step 14: touches MEM-2", "both  both-event",
		"port  port-event", "sim  sim-event", "<code>CMP-1</code>", "only-there", "not run"} {
		if !strings.Contains(c, want) {
			t.Errorf("the comparison lacks %q", want)
		}
	}
}

// The same results make the same page, byte for byte.
func TestHTMLDeterministic(t *testing.T) {
	make := func() string {
		tr := loop(60)
		p := NewHTMLPage(HTMLOptions{Target: "sim"})
		p.Add(failing("a", tr, tr.Events[10]), &tr)
		return page(t, p)
	}
	if make() != make() {
		t.Error("two pages of the same results differ")
	}
}
