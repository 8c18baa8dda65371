//go:build ignore

// compare sets two directories of traces of the same specs side by side (the
// Go engine's and a port's, written by replayspec run --trace-out DIR) and
// prints, per spec and thread, where the sequences of events differ. It
// leaves out what may rightly differ between implementations: times, ids,
// addresses, how many bytes a restore wrote, modeled sample counts.
//
//	go run ./ports/c/compare/compare.go GO_DIR PORT_DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

func load(p string) trace.Trace {
	f, err := os.Open(p)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	t, err := trace.Read(f)
	if err != nil {
		panic(fmt.Sprint(p, err))
	}
	return t
}

func key(e trace.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", e.Type)
	if e.Op != "" {
		fmt.Fprintf(&b, " %s/%s", e.Op, e.Phase)
	}
	if e.Pass != nil {
		fmt.Fprintf(&b, " p%d", *e.Pass)
	}
	if e.Total != nil {
		fmt.Fprintf(&b, " t%d", *e.Total)
	}
	if e.Service != "" {
		fmt.Fprintf(&b, " %s", e.Service)
	}
	if e.Context != 0 {
		fmt.Fprintf(&b, " ctx%d", e.Context)
	}
	if e.Call != "" {
		fmt.Fprintf(&b, " %s", e.Call)
	}
	if e.Status != "" {
		fmt.Fprintf(&b, " %s", e.Status)
	}
	if e.Result != nil {
		fmt.Fprintf(&b, " =%d", *e.Result)
	}
	if e.UserData != nil {
		fmt.Fprintf(&b, " ud%d", *e.UserData)
	}
	if len(e.Payload) > 0 {
		fmt.Fprintf(&b, " %v", e.Payload)
	}
	if e.PayloadSize != nil {
		fmt.Fprintf(&b, " ps%d", *e.PayloadSize)
	}
	if e.Info != nil {
		fmt.Fprintf(&b, " info%v", *e.Info)
	}
	if len(e.Counters) > 0 && (e.Service == trace.CounterCollection || e.Service == trace.DeviceCounting) {
		fmt.Fprintf(&b, " %v", e.Counters)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Digest != "" {
		fmt.Fprintf(&b, " %s", e.Digest)
	}
	if e.Type == trace.Kernel {
		fmt.Fprintf(&b, " %s>%s sig%v", e.MemIn, e.MemOut, e.Signal != 0)
	}
	if e.Type == trace.Snapshot {
		fmt.Fprintf(&b, " %dB %dr", e.Bytes, len(e.Regions))
	}
	if e.Corr != nil {
		fmt.Fprintf(&b, " ext%d", e.Corr.External)
	}
	if e.Label != "" && e.Type != trace.Callback && e.Type != trace.Returned {
		fmt.Fprintf(&b, " %s", e.Label)
	}
	if e.Buffer != "" {
		fmt.Fprintf(&b, " %s", e.Buffer)
	}
	return b.String()
}

func summary(t trace.Trace) map[string][]string {
	out := map[string][]string{}
	for _, e := range t.Events {
		if e.Type == trace.Signal || e.Type == trace.AgentInfo {
			continue
		}
		th := fmt.Sprintf("thread %d", e.Thread)
		if e.Type == trace.Warning {
			th = "warnings"
		}
		out[th] = append(out[th], key(e))
	}
	return out
}

func main() {
	a, b := os.Args[1], os.Args[2]
	files, _ := filepath.Glob(filepath.Join(a, "*.ndjson"))
	for _, f := range files {
		name := filepath.Base(f)
		other := filepath.Join(b, name)
		if _, err := os.Stat(other); err != nil {
			fmt.Printf("== %s: only in %s\n", name, a)
			continue
		}
		sa, sb := summary(load(f)), summary(load(other))
		var ths []string
		for k := range sa {
			ths = append(ths, k)
		}
		for k := range sb {
			if _, ok := sa[k]; !ok {
				ths = append(ths, k)
			}
		}
		sort.Strings(ths)
		for _, th := range ths {
			x, y := sa[th], sb[th]
			if strings.Join(x, "\n") == strings.Join(y, "\n") {
				continue
			}
			fmt.Printf("== %s %s: %d vs %d events\n", name, th, len(x), len(y))
			n := max(len(x), len(y))
			shown := 0
			for i := 0; i < n && shown < 6; i++ {
				var l, r string
				if i < len(x) {
					l = x[i]
				}
				if i < len(y) {
					r = y[i]
				}
				if l != r {
					fmt.Printf("  [%d]\n    go: %s\n    c : %s\n", i, l, r)
					shown++
				}
			}
		}
	}
}
