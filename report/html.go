package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// The HTML report is one self-contained file: its style and script are
// inside it, it loads nothing (its Content-Security-Policy forbids every
// request), and html/template escapes every text that came from a spec, a
// trace or a driver, so a hostile name is shown, never run.

//go:embed html_page.tmpl
var pageTemplate string

//go:embed html_page.css
var pageCSS string

//go:embed html_page.js
var pageJS string

// pageTmpl is parsed on first use, not as the package loads: every
// process of the CLI (each driver an exec: target starts, under -race in
// the tests) would otherwise parse it, and few write a page.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(pageTemplate))
})

// csp allows the page's own style and script (by hash) and nothing else:
// no request leaves the page, and an injected script would not run.
var csp = "default-src 'none'; script-src '" + hashOf(pageJS) + "'; style-src '" + hashOf(pageCSS) +
	"'; img-src 'none'; base-uri 'none'; form-action 'none'"

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

// HTMLOptions shape an HTML report.
type HTMLOptions struct {
	// Title heads the page; "replayspec report" by default.
	Title string
	// Target names the target the specs ran on.
	Target         string
	Implementation driver.Implementation
	// Families are the rule families the port claims (nil: all).
	Families []string
	// Command is the command line that made the page, shown on it.
	Command   string
	XFailFile string
	// Baseline is a previous run's failures: the page lists new
	// failures, fixed cases and flakes against it.
	Baseline *runner.Baseline
	// Compare is another target's run of the same specs: the page shows
	// where the two differ (replayspec diff's view).
	Compare *HTMLCompare
}

// HTMLCompare is the run a page is compared with.
type HTMLCompare struct {
	Target  string
	File    string
	Results []JSONResult
	// Divergences are the first divergences of each spec's two traces,
	// by spec name, where both traces were at hand.
	Divergences map[string][]HTMLDivergence
	// Note says what the comparison could not do (traces missing).
	Note string
}

// HTMLDivergence is one dispatch's first divergence between two traces.
type HTMLDivergence struct {
	Dispatch string
	Step     int
	Rules    []string
	Before   string // the event both agree on before it
	A, B     string // each side's event; empty: no more events
}

// HTMLPage collects a run for its page: Add each spec as it finishes (its
// timelines are drawn then, so the trace may be dropped after), then
// Write once.
type HTMLPage struct {
	opts    HTMLOptions
	records []JSONResult
	specs   []htmlSpec
}

// NewHTMLPage starts a page.
func NewHTMLPage(opts HTMLOptions) *HTMLPage {
	return &HTMLPage{opts: opts}
}

type htmlSpec struct {
	ID, Name, File, Status, Class, Verdict, Search string
	Open                                           bool
	Rules, Listed                                  []string
	Time                                           string
	Passes, Events, Attempts                       int
	Reason, Error, Skip, FlakyFailure              string
	Violations, Expected                           []htmlViolation
	Unseen, Unexercised, Unobserved                []string
	NothingJudged                                  bool
	Judged                                         []htmlJudged
	NeverEnded                                     []JSONStopped
	Rerun, TraceFile                               string
	Panels                                         []tlPanel
	PanelsLeft                                     int
	NoTrace                                        string
	Orphans                                        []htmlCited // cited events no panel draws
}

type htmlJudged struct {
	Rule, Verdict, Class string
	Instances            int
	Missing              []string
}

type htmlViolation struct {
	Rule, Family, Requires, Message, Label string
	Dispatch                               uint64
	Events                                 []htmlCited
}

type htmlCited struct {
	Line   string
	Anchor string // the id of its mark in a timeline; empty if not drawn
}

// Add adds one spec's result; t is its trace, or nil when there is none.
func (p *HTMLPage) Add(r JSONResult, t *trace.Trace) {
	var events Events
	if t != nil {
		events = EventsOf(*t)
	}
	p.AddFrom(r, events) // a held trace reads without error
}

// AddFrom adds one spec's result, its timelines drawn from its trace's
// events (nil: it has none), read as a stream a few times over and never
// held (issue 23). When they cannot be read, the spec is added without
// timelines, saying why, and the error is returned.
func (p *HTMLPage) AddFrom(r JSONResult, events Events) error {
	p.records = append(p.records, r)
	i := len(p.specs)
	name := r.Name
	if r.Run > 0 {
		name = fmt.Sprintf("%s#%d", name, r.Run)
	}
	s := htmlSpec{ID: "s" + strconv.Itoa(i), Name: name, File: r.File, Status: r.Outcome, Class: statusClass(r.Outcome),
		Verdict: r.Verdict, Rules: r.Rules, Listed: r.Listed, Time: millis(fromMS(r.ElapsedMS)), Passes: r.Passes,
		Events: r.Events, Attempts: r.Attempts, Reason: r.Reason, Error: r.Error, Skip: r.SkipReason,
		FlakyFailure: r.FlakyFailure, Unseen: r.Unseen, Unexercised: r.Unexercised, Unobserved: r.Unobserved,
		NothingJudged: r.NothingJudged, NeverEnded: r.NeverEnded, Rerun: r.Rerun, TraceFile: r.TraceFile}
	s.Open = r.Outcome == string(runner.Failed) || r.Outcome == string(runner.Errored)
	s.Search = strings.ToLower(name + " " + strings.Join(r.Rules, " ") + " " + r.Outcome + " " + r.File)
	for _, j := range r.Judged {
		s.Judged = append(s.Judged, htmlJudged{Rule: j.Rule, Verdict: j.Verdict, Class: statusClass(j.Verdict), Instances: j.Instances, Missing: j.Missing})
	}
	cited := map[uint64]bool{}
	for _, v := range append(slices.Clone(r.Violations), r.Expected...) {
		for _, e := range v.Events {
			cited[e.Seq] = true
		}
	}
	held, err := false, error(nil)
	if events != nil {
		s.Panels, s.PanelsLeft, held, err = timelinePanels(events, cited, s.ID)
	}
	switch {
	case err != nil:
		s.NoTrace = "no timeline: its trace could not be read (" + err.Error() + ")"
	case held:
	case r.Outcome == string(runner.Skipped):
	default:
		s.NoTrace = "no trace at hand for this spec"
		if r.TraceFile != "" {
			s.NoTrace += " (" + r.TraceFile + " could not be read)"
		} else if r.Rerun != "" {
			s.NoTrace += ": run it again with --trace-out, or write every trace with run --trace-out DIR and pass --traces DIR to report"
		}
	}
	// Each cited event links to its mark: in its violation's dispatch
	// when drawn there, else in the first picture that draws it.
	anchor := func(disp, seq uint64) string {
		first := ""
		for _, pn := range s.Panels {
			if !pn.cited[seq] {
				continue
			}
			id := pn.ID + "-e" + strconv.FormatUint(seq, 10)
			if pn.dispatch == disp {
				return id
			}
			if first == "" {
				first = id
			}
		}
		return first
	}
	seen := map[uint64]bool{}
	view := func(vs []JSONViolation) []htmlViolation {
		var out []htmlViolation
		for _, v := range vs {
			hv := htmlViolation{Rule: v.Rule, Family: v.Family, Requires: v.Requires, Message: v.Message, Label: v.Label, Dispatch: v.Dispatch}
			for _, e := range v.Events {
				c := htmlCited{Line: check.FormatEvent(e), Anchor: anchor(v.Dispatch, e.Seq)}
				hv.Events = append(hv.Events, c)
				if c.Anchor == "" && len(s.Panels) > 0 && !seen[e.Seq] {
					seen[e.Seq] = true
					s.Orphans = append(s.Orphans, c)
				}
			}
			out = append(out, hv)
		}
		return out
	}
	s.Violations, s.Expected = view(r.Violations), view(r.Expected)
	p.specs = append(p.specs, s)
	return err
}

// Write writes the page.
func (p *HTMLPage) Write(w io.Writer, end End) error {
	var sum summer
	for _, r := range p.records {
		sum.add(r)
	}
	outcomes := make([]runner.Outcome, len(p.records))
	var sources []trace.Source
	for i, r := range p.records {
		outcomes[i] = Outcome(r)
		if sources == nil && r.Sources != nil {
			sources = r.Sources
		}
	}
	m := BuildMatrix(outcomes, p.opts.Families)
	m.Target, m.Implementation = p.opts.Target, p.opts.Implementation
	title := p.opts.Title
	if title == "" {
		title = "replayspec report"
	}
	profile := driver.ProfileOf(sources)
	if profile == "" && len(sources) > 0 {
		profile = "custom"
	}
	impl := p.opts.Implementation.Name
	if v := p.opts.Implementation.Version; v != "" {
		impl += " " + v
	}
	view := pageView{
		Title: title, CSP: csp, CSS: template.CSS(pageCSS), JS: template.JS(pageJS),
		Target: p.opts.Target, Implementation: impl, Command: p.opts.Command, XFailFile: p.opts.XFailFile,
		Profile: profile, Sources: sourcesText(sources), Summary: sum.summary(), Stopped: end.Stopped,
		Specs: p.specs, Matrix: p.matrixView(m), Statuses: specStatuses,
	}
	view.Elapsed = millis(fromMS(view.Summary.ElapsedMS))
	for _, st := range end.Stale {
		view.Stale = append(view.Stale, st.Message)
	}
	view.Counts = []htmlCount{
		{"passed", view.Summary.Passed, "st-passed"}, {"failed", view.Summary.Failed, "st-failed"},
		{"error", view.Summary.Errors, "st-error"}, {"expected failure", view.Summary.XFailed, "st-xfail"},
		{"flaky", view.Summary.Flaky, "st-flaky"}, {"skipped", view.Summary.Skipped, "st-skipped"},
	}
	if p.opts.Baseline != nil {
		view.Baseline = p.baselineView(*p.opts.Baseline)
	}
	if p.opts.Compare != nil {
		view.Compare = p.compareView(*p.opts.Compare)
	}
	bw := bufio.NewWriterSize(w, 64<<10) // the template writes in small pieces
	if err := pageTmpl().Execute(bw, view); err != nil {
		return err
	}
	return bw.Flush()
}

type pageView struct {
	Title, CSP                                 string
	CSS                                        template.CSS
	JS                                         template.JS
	Target, Implementation, Command, XFailFile string
	Profile, Sources, Elapsed, Stopped         string
	Summary                                    JSONSummary
	Counts                                     []htmlCount
	Stale                                      []string
	Specs                                      []htmlSpec
	Matrix                                     htmlMatrix
	Statuses                                   []string
	Baseline                                   *htmlBaseline
	Compare                                    *htmlCompareView
}

type htmlCount struct {
	Label string
	N     int
	Class string
}

// specStatuses are the outcomes a spec can have, for the filter.
var specStatuses = []string{string(runner.Passed), string(runner.Failed), string(runner.Errored), string(runner.Expected),
	string(runner.Flaky), string(runner.Skipped)}

// matrixStatuses are the matrix's columns, in order.
var matrixStatuses = []runner.Status{runner.Passed, runner.Failed, runner.Expected, runner.Errored,
	NotObservable, NotExercised, runner.Skipped, NotClaimed, NotCovered}

type htmlMatrix struct {
	Statuses []htmlStatusHead
	Families []htmlFamilyRow
	Rules    []htmlRuleRow
}

type htmlStatusHead struct{ Status, Class string }

type htmlFamilyRow struct {
	Family string
	Cells  []htmlCount
	Total  int
}

type htmlRuleRow struct {
	Rule, Family, Requires, Status, Class string
	Instances                             int
	Lists                                 []htmlSpecList
}

type htmlSpecList struct {
	Status, Class string
	Specs         []htmlRef
}

type htmlRef struct {
	Name, Href string
	Instances  int
	Note       string
}

func (p *HTMLPage) href(name string) string {
	for _, s := range p.specs {
		if s.Name == name {
			return "#" + s.ID
		}
	}
	return ""
}

func (p *HTMLPage) matrixView(m Matrix) htmlMatrix {
	var v htmlMatrix
	for _, st := range matrixStatuses {
		v.Statuses = append(v.Statuses, htmlStatusHead{string(st), statusClass(string(st))})
	}
	// Instances each rule was judged on, per spec.
	inst := map[string]map[string]int{}
	for _, s := range p.specs {
		for _, j := range s.Judged {
			if inst[j.Rule] == nil {
				inst[j.Rule] = map[string]int{}
			}
			inst[j.Rule][s.Name] += j.Instances
		}
	}
	fams := map[string]*htmlFamilyRow{}
	var famOrder []string
	for _, r := range m.Rules {
		fam := family(r.Rule)
		row := htmlRuleRow{Rule: r.Rule, Family: fam, Requires: r.Requires, Status: string(r.Status), Class: statusClass(string(r.Status))}
		lists := []struct {
			st    runner.Status
			names []string
		}{{runner.Passed, r.Passed}, {runner.Failed, r.Failed}, {runner.Expected, r.Expected}, {runner.Errored, r.Errors},
			{NotObservable, r.Unobserved}, {NotExercised, r.Unexercised}, {runner.Skipped, r.Skipped}}
		for _, l := range lists {
			if len(l.names) == 0 {
				continue
			}
			sl := htmlSpecList{Status: string(l.st), Class: statusClass(string(l.st))}
			for _, n := range l.names {
				ref := htmlRef{Name: n, Href: p.href(n), Instances: inst[r.Rule][n]}
				row.Instances += ref.Instances
				sl.Specs = append(sl.Specs, ref)
			}
			row.Lists = append(row.Lists, sl)
		}
		v.Rules = append(v.Rules, row)
		f, ok := fams[fam]
		if !ok {
			f = &htmlFamilyRow{Family: fam}
			for _, st := range matrixStatuses {
				f.Cells = append(f.Cells, htmlCount{Label: string(st), Class: statusClass(string(st))})
			}
			fams[fam] = f
			famOrder = append(famOrder, fam)
		}
		f.Total++
		if i := slices.Index(matrixStatuses, r.Status); i >= 0 {
			f.Cells[i].N++
		}
	}
	order := rules.Families()
	slices.SortStableFunc(famOrder, func(a, b string) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		if ia < 0 {
			ia = len(order)
		}
		if ib < 0 {
			ib = len(order)
		}
		return ia - ib
	})
	for _, f := range famOrder {
		v.Families = append(v.Families, *fams[f])
	}
	return v
}

type htmlBaseline struct {
	File                     string
	New, Fixed, Still, Flaky []htmlRef
	Unchanged                int
}

// caseStatus is a record's status as the results file writes it.
func caseStatus(r JSONResult) runner.CaseStatus {
	if r.Outcome == string(runner.Flaky) {
		return runner.CaseFlake
	}
	switch runner.Verdict(r.Verdict) {
	case runner.Pass:
		return runner.CasePass
	case runner.Skip:
		return runner.CaseSkip
	case runner.Error:
		return runner.CaseError
	}
	return runner.CaseFail
}

// change is what a record did against a baseline (runner.Baseline.Compare
// on the record's status).
func change(b runner.Baseline, r JSONResult) runner.Change {
	_, listed := b.Failing[r.Name]
	switch caseStatus(r) {
	case runner.CaseFlake:
		return runner.Flaked
	case runner.CaseFail, runner.CaseError:
		if listed {
			return runner.StillFailing
		}
		return runner.NewFailure
	case runner.CasePass:
		if listed {
			return runner.Fixed
		}
	}
	return runner.Unchanged
}

func (p *HTMLPage) baselineView(b runner.Baseline) *htmlBaseline {
	v := &htmlBaseline{File: b.File}
	for i, r := range p.records {
		ref := htmlRef{Name: p.specs[i].Name, Href: "#" + p.specs[i].ID}
		switch change(b, r) {
		case runner.NewFailure:
			v.New = append(v.New, ref)
		case runner.Fixed:
			v.Fixed = append(v.Fixed, ref)
		case runner.StillFailing:
			v.Still = append(v.Still, ref)
		case runner.Flaked:
			ref.Note = r.Reason
			v.Flaky = append(v.Flaky, ref)
		default:
			v.Unchanged++
		}
	}
	return v
}

type htmlCompareView struct {
	A, B, File, Note  string
	Same, Differ, Len int
	Rows              []htmlCompareRow
}

type htmlCompareRow struct {
	Name, Href, A, B, AClass, BClass string
	Differs                          bool
	Rules                            []htmlRuleDiff
	Divergences                      []HTMLDivergence
}

type htmlRuleDiff struct{ Rule, A, B, AClass, BClass string }

func (p *HTMLPage) compareView(c HTMLCompare) *htmlCompareView {
	v := &htmlCompareView{A: p.opts.Target, B: c.Target, File: c.File, Note: c.Note}
	other := map[string]JSONResult{}
	var otherOrder []string
	for _, r := range c.Results {
		k := caseName(r)
		if _, ok := other[k]; !ok {
			otherOrder = append(otherOrder, k)
		}
		other[k] = r
	}
	seen := map[string]bool{}
	add := func(row htmlCompareRow) {
		if row.Differs {
			v.Differ++
		} else {
			v.Same++
		}
		v.Rows = append(v.Rows, row)
	}
	for i, r := range p.records {
		k := caseName(r)
		seen[k] = true
		row := htmlCompareRow{Name: k, Href: "#" + p.specs[i].ID, A: r.Outcome, AClass: statusClass(r.Outcome), B: "not run", BClass: "st-notcovered"}
		o, ok := other[k]
		if !ok {
			row.Differs = true
			add(row)
			continue
		}
		row.B, row.BClass = o.Outcome, statusClass(o.Outcome)
		row.Rules = ruleDiffs(r.Judged, o.Judged)
		row.Divergences = c.Divergences[k]
		row.Differs = r.Outcome != o.Outcome || len(row.Rules) > 0 || len(row.Divergences) > 0
		add(row)
	}
	for _, k := range otherOrder {
		if !seen[k] {
			o := other[k]
			add(htmlCompareRow{Name: k, A: "not run", AClass: "st-notcovered", B: o.Outcome, BClass: statusClass(o.Outcome), Differs: true})
		}
	}
	// Differences first; otherwise the run's order.
	slices.SortStableFunc(v.Rows, func(a, b htmlCompareRow) int {
		switch {
		case a.Differs && !b.Differs:
			return -1
		case b.Differs && !a.Differs:
			return 1
		}
		return 0
	})
	v.Len = len(v.Rows)
	return v
}

func caseName(r JSONResult) string {
	if r.Run > 0 {
		return fmt.Sprintf("%s#%d", r.Name, r.Run)
	}
	return r.Name
}

// ruleDiffs are the rules two runs of a spec judged differently.
func ruleDiffs(a, b []JSONRule) []htmlRuleDiff {
	va, vb := map[string]string{}, map[string]string{}
	var order []string
	for _, j := range a {
		va[j.Rule] = j.Verdict
		order = append(order, j.Rule)
	}
	for _, j := range b {
		if _, ok := va[j.Rule]; !ok {
			order = append(order, j.Rule)
		}
		vb[j.Rule] = j.Verdict
	}
	var out []htmlRuleDiff
	for _, id := range order {
		x, y := or(va[id], "not judged"), or(vb[id], "not judged")
		if x != y {
			out = append(out, htmlRuleDiff{Rule: id, A: x, B: y, AClass: statusClass(x), BClass: statusClass(y)})
		}
	}
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// statusClass is the CSS class of an outcome, a matrix status or a
// verdict.
func statusClass(s string) string {
	switch s {
	case "passed", "pass":
		return "st-passed"
	case "failed", "fail":
		return "st-failed"
	case "error":
		return "st-error"
	case "expected failure":
		return "st-xfail"
	case "flaky":
		return "st-flaky"
	case "skipped", "skip":
		return "st-skipped"
	case "not observable":
		return "st-notobs"
	case "not exercised":
		return "st-notex"
	case "not claimed":
		return "st-notclaimed"
	}
	return "st-notcovered"
}

// CaseName is a result's case name: NAME, or NAME#K for run K of several.
func CaseName(r JSONResult) string { return caseName(r) }

// BaselineOf makes a baseline of a run's results: its failures and errors
// (a flake is neither).
func BaselineOf(file string, results []JSONResult) runner.Baseline {
	b := runner.Baseline{File: file, Failing: map[string]runner.CaseStatus{}}
	for _, r := range results {
		if st := caseStatus(r); st == runner.CaseFail || st == runner.CaseError {
			b.Failing[r.Name] = st
		}
	}
	return b
}
