package cuda

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestModulePTXIsNULTerminatedAndTargetsSM52(t *testing.T) {
	img := modulePTX()
	if img[len(img)-1] != 0 || bytes.Count(img, []byte{0}) != 1 {
		t.Fatal("module image must end in exactly one NUL")
	}
	text := string(img[:len(img)-1])
	for _, want := range []string{".version 6.0\n", ".target sm_52\n", ".address_size 64\n"} {
		if !strings.HasPrefix(text, ".version") || !strings.Contains(text, want) {
			t.Errorf("header lacks %q", want)
		}
	}
}

func TestModulePTXHasEveryEntryOnce(t *testing.T) {
	text := string(modulePTX())
	names := append([]string(nil), internalKernels...)
	for _, k := range kernelLibrary {
		names = append(names, k.name)
	}
	for _, n := range names {
		if c := strings.Count(text, ".visible .entry "+n+"("); c != 1 {
			t.Errorf("entry %s appears %d times", n, c)
		}
	}
}

// TestPTXBalancedAndDeclared checks what ptxas would reject first: braces,
// parameters referenced but not declared, registers used beyond their
// declared range.
func TestPTXBalancedAndDeclared(t *testing.T) {
	entries := strings.Split(string(modulePTX()), ".visible .entry ")[1:]
	regDecl := regexp.MustCompile(`\.reg \.\w+ %(\w+?)<(\d+)>;`)
	regSingle := regexp.MustCompile(`\.reg \.\w+ %(\w+);`)
	regUse := regexp.MustCompile(`%([a-z]+)(\d*)\b`)
	paramUse := regexp.MustCompile(`\[(\w+)\]`)
	for _, e := range entries {
		name := e[:strings.Index(e, "(")]
		if strings.Count(e, "{")-strings.Count(e, "}") != 0 {
			t.Errorf("%s: unbalanced braces", name)
		}
		bounds := map[string]int{}
		for _, m := range regDecl.FindAllStringSubmatch(e, -1) {
			n := 0
			for _, c := range m[2] {
				n = n*10 + int(c-'0')
			}
			bounds[m[1]] = n
		}
		singles := map[string]bool{}
		for _, m := range regSingle.FindAllStringSubmatch(e, -1) {
			singles[m[1]] = true
		}
		special := map[string]bool{"ctaid": true, "ntid": true, "tid": true, "nctaid": true}
		body := regDecl.ReplaceAllString(regSingle.ReplaceAllString(e[strings.Index(e, "{"):], ""), "")
		for _, m := range regUse.FindAllStringSubmatch(body, -1) {
			base, idx := m[1], m[2]
			if special[base] || (idx == "" && singles[base]) {
				continue
			}
			n, ok := bounds[base]
			if !ok {
				t.Errorf("%s: register %%%s%s not declared", name, base, idx)
				continue
			}
			i := 0
			for _, c := range idx {
				i = i*10 + int(c-'0')
			}
			if idx == "" || i >= n {
				t.Errorf("%s: register %%%s%s outside %%%s<%d>", name, base, idx, base, n)
			}
		}
		header := e[:strings.Index(e, "{")]
		for _, m := range paramUse.FindAllStringSubmatch(body, -1) {
			if strings.HasPrefix(m[1], "%") {
				continue
			}
			if !strings.Contains(header, " "+m[1]+",") && !strings.Contains(header, " "+m[1]+"\n") {
				t.Errorf("%s: parameter %s not declared", name, m[1])
			}
		}
	}
}

func TestEveryKernelGuardsN(t *testing.T) {
	for _, k := range kernelLibrary {
		e := entryPTX(k)
		if !strings.Contains(e, ".param .u32 n\n") || !strings.Contains(e, "setp.ge.u32 %p1, %r5, %r1;") {
			t.Errorf("%s does not guard i < n", k.name)
		}
	}
}
