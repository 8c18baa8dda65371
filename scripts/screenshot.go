//go:build ignore

// screenshot takes the README's picture of an HTML report: the page opened
// from disk in headless Chromium (chromedp), its compliance matrix filtered
// to the rules of one status with the page's own filter, the whole page
// captured.
//
//	go run scripts/screenshot.go -status failed out/report.html docs/report.png
//
// make screenshot runs it on a report it makes first.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	status := flag.String("status", "", "filter the matrix to the rules of this `status` (failed, passed, ...)")
	width := flag.Int("width", 1200, "the window's width in `px`")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/screenshot.go [-status S] [-width PX] PAGE.html OUT.png")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := shoot(flag.Arg(0), flag.Arg(1), *status, *width); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func shoot(page, out, status string, width int) error {
	path := os.Getenv("REPLAYSPEC_CHROME")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		return fmt.Errorf("no Chromium on PATH: apt-get install chromium, or set REPLAYSPEC_CHROME")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "screenshot")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(profile),
		chromedp.WindowSize(width, 900))
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(ctx)
	defer cancelCtx()
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(`html[data-ready="1"]`))}
	if status != "" {
		steps = append(steps, chromedp.SetValue(chromedp.CSS("#rule-status"), status),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('rule-status').dispatchEvent(new Event('change'))`))
	}
	if err := chromedp.Do(ctx, steps...); err != nil {
		return err
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}
