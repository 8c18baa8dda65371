package main

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
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
