package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The HTML report in a real browser: headless Chromium (Debian's chromium
// package; .ci/run installs it), driven through the DevTools protocol by
// chromedp. The pages are made by the command itself (run --html, report
// --from --html), opened from disk as a user would.

// browserPath finds Chromium: $REPLAYSPEC_CHROME, else the usual names.
func browserPath() (string, error) {
	if p := os.Getenv("REPLAYSPEC_CHROME"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium on PATH (chromium, chromium-browser, google-chrome): install Debian's chromium package (.ci/run does) or set REPLAYSPEC_CHROME")
}

// browser is one headless Chromium for a test, and what its page did.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	console  []string // errors and warnings: console calls, exceptions, the browser's log
	requests []string // every URL the page asked for
}

// newBrowser starts Chromium with the flags a closed network needs (no
// background networking, no component updates, no QUIC, no sync) and a
// fresh profile; the test skips, saying why, when there is none.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	path, err := browserPath()
	if err != nil {
		t.Skip(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
	}
	// A bound on everything the browser does: a page that hangs fails
	// the test at this deadline instead of hanging it (no time is asserted).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(ctx)
	t.Cleanup(cancelCtx)
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Skipf("Chromium (%s) does not start here: %v", path, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil {
			b.requests = append(b.requests, e.Request.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleWarning {
				b.mu.Lock()
				b.console = append(b.console, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// open loads a page from disk and waits for its script to have run.
func (b *browser) open(t *testing.T, file string) {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.requests, b.console = nil, nil
	b.mu.Unlock()
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(`html[data-ready="1"]`))); err != nil {
		t.Fatalf("opening %s: %v", file, err)
	}
}

// clean fails the test on any console message or request beyond the page.
func (b *browser) clean(t *testing.T, file string) {
	t.Helper()
	abs, _ := filepath.Abs(file)
	page := (&url.URL{Scheme: "file", Path: abs}).String()
	// Console messages arrive on their own goroutine: give the last a
	// moment through a round trip to the page.
	_, _ = chromedp.Run(b.ctx, chromedp.Evaluate[int]("1"))
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		t.Errorf("console: %s", m)
	}
	for _, r := range b.requests {
		if r != page {
			t.Errorf("the page asked for %s: it must load nothing", r)
		}
	}
}

func (b *browser) eval(t *testing.T, js string) any {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *browser) num(t *testing.T, js string) int {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return int(v)
}

// shot writes a screenshot of the element sel as an artifact.
func (b *browser) shot(t *testing.T, sel, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", sel, err)
	}
	p := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// artifacts is where screenshots go: $REPLAYSPEC_ARTIFACTS (.ci/run sets
// out/browser), else the test's temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("REPLAYSPEC_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHTMLReportInBrowser: the library's page with a planted fault (most
// specs fail) loads with no console message and no request, the matrix and
// a failing spec's timeline render, the filters filter, zoom zooms, and a
// cited event's link brings its mark.
func TestHTMLReportInBrowser(t *testing.T) {
	b := newBrowser(t)
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, errs := cli(t, "run", "--quiet", "--fault", "completion_every_pass", "--html", page, library); code != exitFail {
		t.Fatalf("run: exit %d, want 1 (the fault fails specs); stderr:\n%s", code, errs)
	}
	b.open(t, page)
	b.clean(t, page)

	rules := b.num(t, `document.querySelectorAll('#rules tr.rule').length`)
	if rules < 50 {
		t.Fatalf("the matrix shows %d rules, want the catalogue", rules)
	}
	if n := b.num(t, `document.querySelectorAll('#rules tr.rule:not(.hidden)').length`); n != rules {
		t.Errorf("%d of %d rules shown before any filter", n, rules)
	}
	if h := b.num(t, `document.querySelector('#matrix table.families').getBoundingClientRect().height`); h < 100 {
		t.Errorf("the family x status table is %d px high: not rendered", h)
	}

	// A failing spec is open on its violations, and its timeline draws
	// the window, the passes, the kernels and the cited events.
	failing := `document.querySelector('div.spec.st-failed')`
	if b.eval(t, failing+` !== null && `+failing+`.querySelector('details').open`) != true {
		t.Fatal("no failing spec shown open")
	}
	for what, sel := range map[string]string{
		"window": "rect.slice.win", "pass": "rect.slice.pass", "kernel": "rect.kernel", "cited event": "g.m.cited", "violation": ".violation",
	} {
		if n := b.num(t, failing+`.querySelectorAll('`+sel+`').length`); n == 0 {
			t.Errorf("the first failing spec's page draws no %s (%s)", what, sel)
		}
	}
	if w := b.num(t, failing+`.querySelector('svg.tlsvg').getBoundingClientRect().width`); w < 100 {
		t.Errorf("its timeline is %d px wide: not rendered", w)
	}

	// The matrix's filter: by text, by family and status, by a cell.
	cmp := b.num(t, `Array.from(document.querySelectorAll('#rules tr.rule')).filter(r => r.dataset.family === 'CMP').length`)
	if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS("#rule-q"), "CMP-")); err != nil {
		t.Fatal(err)
	}
	if n := b.num(t, `document.querySelectorAll('#rules tr.rule:not(.hidden)').length`); n != cmp || cmp == 0 {
		t.Errorf("typing CMP- shows %d rules, want the %d CMP rules", n, cmp)
	}
	if n := b.num(t, `Array.from(document.querySelectorAll('#rules tr.rule:not(.hidden)')).filter(r => !r.dataset.q.startsWith('CMP-')).length`); n != 0 {
		t.Errorf("typing CMP- leaves %d other rules shown", n)
	}
	b.eval(t, `document.getElementById('rule-q').value=''; document.getElementById('rule-q').dispatchEvent(new Event('input'))`)
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`button.cell[data-status="failed"]`))); err != nil {
		t.Fatal(err)
	}
	shown := b.num(t, `document.querySelectorAll('#rules tr.rule:not(.hidden)').length`)
	wrong := b.num(t, `Array.from(document.querySelectorAll('#rules tr.rule:not(.hidden)')).filter(r => r.dataset.status !== 'failed' || r.dataset.family !== document.querySelector('button.cell[data-status="failed"]').dataset.family).length`)
	if shown == 0 || wrong != 0 {
		t.Errorf("the failed cell shows %d rules, %d of them not its family's failed rules", shown, wrong)
	}

	// The specs' filter: uncheck passed, then search a name.
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`input.spec-status[value="passed"]`))); err != nil {
		t.Fatal(err)
	}
	if n := b.num(t, `document.querySelectorAll('div.spec.st-passed:not(.hidden)').length`); n != 0 {
		t.Errorf("with passed unchecked, %d passing specs are still shown", n)
	}
	if n := b.num(t, `document.querySelectorAll('div.spec.st-failed:not(.hidden)').length`); n == 0 {
		t.Error("with passed unchecked, no failing spec is shown")
	}
	if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS("#spec-q"), "fixed-three")); err != nil {
		t.Fatal(err)
	}
	if n := b.num(t, `document.querySelectorAll('div.spec:not(.hidden)').length`); n != 1 {
		t.Errorf("searching fixed-three shows %d specs, want 1", n)
	}

	// Zoom, and a cited event's link.
	spec := `document.querySelector('div.spec:not(.hidden)')`
	w0 := b.num(t, spec+`.querySelector('svg.tlsvg').getAttribute('width')*1`)
	b.eval(t, spec+`.querySelector('.tl .zin').click()`)
	if w1 := b.num(t, spec+`.querySelector('svg.tlsvg').getAttribute('width')*1`); w1 <= w0 {
		t.Errorf("zoom in: width %d, was %d", w1, w0)
	}
	b.eval(t, spec+`.querySelector('a.cite').click()`)
	if n := b.num(t, spec+`.querySelectorAll('g.m.cited.flash').length`); n != 1 {
		t.Errorf("following a cited event's link flashes %d marks, want 1", n)
	}
	b.clean(t, page)

	b.shot(t, "header", "report-summary.png")
	b.shot(t, `div.spec:not(.hidden) .tl`, "report-timeline.png")
}

// hostile is text a port, a results file or a trace could carry: shown
// as text, it must never become markup or run.
const hostile = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`

// hostileResults writes a JSON result stream and a trace whose names,
// messages and labels are hostile.
func hostileResults(t *testing.T, dir string) string {
	t.Helper()
	name := `spec` + hostile
	tr := filepath.Join(dir, "t.ndjson")
	tempFile(t, dir, "t.ndjson", strings.Join([]string{
		`{"trace":"replayspec.trace/v2","spec":` + quoteJSON(name) + `,"sources":["tool","app","runtime","sdk"]}`,
		`{"seq":1,"type":"app_dispatch","time":1,"thread":1,"label":` + quoteJSON(hostile) + `,"signal":1,"kernel":` + quoteJSON(hostile) + `}`,
		`{"seq":2,"type":"callback","time":2,"thread":1,"dispatch":1,"label":` + quoteJSON(hostile) + `,"op":"CONFIG","phase":"ENTER","pass":0,"total":0}`,
		`{"seq":3,"type":"warning","time":3,"thread":1,"code":"graph_launch","message":` + quoteJSON(hostile) + `}`,
		`{"seq":4,"type":"callback","time":4,"thread":1,"dispatch":1,"label":` + quoteJSON(hostile) + `,"op":"CONFIG","phase":"EXIT","pass":0,"total":0}`,
		`{"seq":5,"type":"app_complete","time":5,"thread":1,"label":` + quoteJSON(hostile) + `,"signal":1}`,
	}, "\n")+"\n")
	result := `{"event":"result","name":` + quoteJSON(name) + `,"file":` + quoteJSON("specs/"+hostile+".yaml") +
		`,"verdict":"fail","outcome":"failed","rules":[` + quoteJSON(hostile) + `],"passes":0,"events":5,"elapsed_ms":1,` +
		`"violations":[{"rule":"CMP-1","family":"CMP","requires":` + quoteJSON(hostile) + `,"message":` + quoteJSON("</pre></details>"+hostile) +
		`,"dispatch":1,"label":` + quoteJSON(hostile) + `,"events":[{"seq":3,"type":"warning","message":` + quoteJSON(hostile) + `}]}],` +
		`"error":` + quoteJSON(hostile) + `,"trace_file":` + quoteJSON(tr) + `}`
	return tempFile(t, dir, "hostile.json", strings.Join([]string{
		`{"report":"replayspec.report/v2","event":"start","target":` + quoteJSON("sim"+hostile) + `}`,
		result,
		`{"event":"end","summary":{"total":1,"passed":0,"failed":1,"errors":0,"skipped":0,"expected_failures":0,"elapsed_ms":1}}`,
	}, "\n")+"\n")
}

func quoteJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestHTMLHostileTextInBrowser: a spec name, a file, a rule, a message, a
// target and trace labels carrying <script> and an onerror handler are
// shown as text: nothing runs, no element is made, nothing is requested.
func TestHTMLHostileTextInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "hostile.html")
	if code, _, errs := cli(t, "report", "--from", hostileResults(t, dir), "--html", page); code != exitFail {
		t.Fatalf("report: exit %d, want 1 (the result failed); stderr:\n%s", code, errs)
	}
	b.open(t, page)
	b.clean(t, page)
	if v := b.eval(t, `window.__pwned === undefined`); v != true {
		t.Errorf("injected script ran: window.__pwned = %v", b.eval(t, `String(window.__pwned)`))
	}
	if n := b.num(t, `document.scripts.length`); n != 1 {
		t.Errorf("%d script elements, want the page's own", n)
	}
	if n := b.num(t, `document.images.length`); n != 0 {
		t.Errorf("%d img elements: hostile text became markup", n)
	}
	if got := b.eval(t, `document.querySelector('div.spec .name').textContent`); got != `spec`+hostile {
		t.Errorf("the spec's name reads %q, want it as text", got)
	}
	if n := b.num(t, `document.querySelectorAll('div.spec g.m').length`); n == 0 {
		t.Error("the hostile trace's timeline was not drawn")
	}
}

// TestHTMLLongLoopInBrowser: a dispatch of 10,000 passes (the default
// pass budget) makes a page that opens, zooms and scrolls without
// hanging: the passes between the first and last few are folded, so the
// picture holds hundreds of elements, not tens of thousands.
func TestHTMLLongLoopInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	spec := tempFile(t, dir, "long.yaml", `version: 1
name: ten-thousand-passes
rules: [PC-3]
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - {name: replay, services: {kernel_replay: {}}}
tool:
  plan: {passes: 10000}
application:
  buffers: [{name: x, agent: gpu0, elements: 16}]
  dispatches: [{name: inc, kernel: increment, agent: gpu0, args: [x]}]
`)
	page := filepath.Join(dir, "long.html")
	if code, _, errs := cli(t, "run", "--html", page, spec); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, errs)
	}
	b.open(t, page)
	if p := b.num(t, `+document.querySelector('div.spec').textContent.match(/(\d+) passes/)[1]`); p != 10000 {
		t.Fatalf("the spec ran %d passes, want 10000", p)
	}
	if n := b.num(t, `document.querySelectorAll('svg.tlsvg rect.fold').length`); n == 0 {
		t.Error("no folded passes: 10,000 passes are drawn one by one")
	}
	if n := b.num(t, `document.querySelectorAll('svg.tlsvg *').length`); n > 5000 {
		t.Errorf("the timeline holds %d elements: the long loop is not folded enough to stay usable", n)
	}
	b.eval(t, `document.querySelector('div.spec details').open = true`)
	b.shot(t, `.tl`, "report-long-loop.png")
	// Zoom all the way in and out, scroll the picture and the page; each
	// step answers (within the browser's deadline) or the test fails.
	for _, step := range []string{
		`for (let i = 0; i < 8; i++) document.querySelector('.tl .zin').click()`,
		`document.querySelector('.tlscroll').scrollLeft = 1e9`,
		`document.querySelector('.tl .zfit').click()`,
		`for (let i = 0; i < 8; i++) document.querySelector('.tl .zout').click()`,
		`window.scrollTo(0, document.body.scrollHeight)`,
		`window.scrollTo(0, 0)`,
	} {
		b.eval(t, step+`; 0`)
	}
	b.clean(t, page)
}
