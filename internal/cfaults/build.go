package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// flags are how the port's Makefile builds a fault's driver
// (`make -C ports/c fault-flags`): one source of truth for the compiler,
// its flags and the sources.
type flags struct {
	CC     []string
	CFLAGS []string
	LDLIBS []string
	SRCS   []string
	FAULTS []string // the switches `make faults` builds, read from sdk/faults.h
}

func readFlags(portDir string) (flags, error) {
	out, err := exec.Command("make", "-s", "-C", portDir, "fault-flags").Output()
	if err != nil {
		return flags{}, fmt.Errorf("make -C %s fault-flags: %v%s", portDir, err, stderrOf(err))
	}
	var fl flags
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "CC":
			fl.CC = strings.Fields(v)
		case "CFLAGS":
			fl.CFLAGS = strings.Fields(v)
		case "LDLIBS":
			fl.LDLIBS = strings.Fields(v)
		case "SRCS":
			fl.SRCS = strings.Fields(v)
		case "FAULTS":
			fl.FAULTS = strings.Fields(v)
		}
	}
	if len(fl.CC) == 0 || len(fl.SRCS) == 0 {
		return flags{}, fmt.Errorf("make -C %s fault-flags printed no CC or SRCS:\n%s", portDir, out)
	}
	return fl, nil
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return "\n" + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// mainSource is the driver's main: rebuilt for every fault with the
// fault's name, which the driver gives in its handshake.
const mainSource = "port/main.c"

// builder builds the baseline driver and one driver per fault from one
// set of objects: a fault's driver recompiles only the files it changes.
type builder struct {
	fl      flags
	portDir string // ports/c, from the repository root
	binDir  string // where the drivers go
	objDir  string // objects: base/, and one directory per fault
	tmpDir  string // patched copies of the port (outside any git work tree)
	jobs    int
}

// driver is the path of a fault's driver, from the repository root.
func (b *builder) driver(name string) string {
	return filepath.Join(b.binDir, "krs-driver-"+name)
}

// baselineName names the unmodified driver: the same objects, no fault.
const baselineName = "baseline"

func objName(src string) string {
	return strings.ReplaceAll(strings.TrimSuffix(src, ".c"), "/", "_") + ".o"
}

// compile compiles one source (relative to srcDir) into obj.
func (b *builder) compile(srcDir, src, obj string, defs []string) error {
	args := append(append(append([]string{}, b.fl.CC[1:]...), b.fl.CFLAGS...), defs...)
	args = append(args, "-c", "-o", obj, src)
	cmd := exec.Command(b.fl.CC[0], args...)
	cmd.Dir = srcDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s (in %s): %v\n%s", b.fl.CC[0], strings.Join(args, " "), srcDir, err, out.String())
	}
	return nil
}

// link links the base objects, with the fault's own objects in place of
// the files it changes, into the driver.
func (b *builder) link(name string, own map[string]string) error {
	var objs []string
	for _, src := range b.fl.SRCS {
		if o, ok := own[src]; ok {
			objs = append(objs, o)
		} else {
			objs = append(objs, abs(filepath.Join(b.objDir, "base", objName(src))))
		}
	}
	args := append(append([]string{}, b.fl.CC[1:]...), b.fl.CFLAGS...)
	args = append(append(append(args, "-o", abs(b.driver(name))), objs...), b.fl.LDLIBS...)
	cmd := exec.Command(b.fl.CC[0], args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("linking the driver of %s: %v\n%s", name, err, out)
	}
	return nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// base compiles every source once, unchanged, and links the baseline
// driver from them.
func (b *builder) base() error {
	dir := filepath.Join(b.objDir, "base")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(b.binDir, 0o755); err != nil {
		return err
	}
	errs := parallel(b.jobs, len(b.fl.SRCS), func(i int) error {
		src := b.fl.SRCS[i]
		return b.compile(b.portDir, src, abs(filepath.Join(dir, objName(src))), nil)
	})
	if err := first(errs); err != nil {
		return err
	}
	return b.link(baselineName, nil)
}

// build builds one fault's driver.
func (b *builder) build(f Fault) error {
	dir := abs(filepath.Join(b.objDir, f.Name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	srcDir := b.portDir
	var changed []string
	defs := []string{fmt.Sprintf("-DKRS_FAULT_NAME=%q", f.Name)}
	switch f.Kind {
	case Switch:
		var err error
		if changed, err = b.testing(f.Name); err != nil {
			return err
		}
		defs = append(defs, "-DKRS_FAULT_"+f.Name+"=1")
	case Patch:
		var err error
		if srcDir, err = b.patched(f); err != nil {
			return err
		}
		changed = f.Files
	}
	own := map[string]string{}
	recompile := []string{mainSource}
	for _, c := range changed {
		if strings.HasSuffix(c, ".h") { // a header: every source may see it
			recompile = b.fl.SRCS
			break
		}
		if slices.Contains(b.fl.SRCS, c) && !slices.Contains(recompile, c) {
			recompile = append(recompile, c)
		}
	}
	for _, src := range recompile {
		obj := filepath.Join(dir, objName(src))
		if err := b.compile(srcDir, src, obj, defs); err != nil {
			return fmt.Errorf("building %s %s: %v", f.Kind, f.Name, err)
		}
		own[src] = obj
	}
	return b.link(f.Name, own)
}

// testing lists the files that test a switch: the sources to recompile
// with it defined (every source, when a header tests it).
func (b *builder) testing(name string) ([]string, error) {
	re := regexp.MustCompile(`\bKRS_FAULT_` + name + `\b`)
	var files []string
	for _, dir := range sourceDirs {
		found, err := filepath.Glob(filepath.Join(b.portDir, dir, "*.[ch]"))
		if err != nil {
			return nil, err
		}
		for _, path := range found {
			if filepath.Base(path) == "faults.h" {
				continue
			}
			text, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			if re.Match(text) {
				rel, _ := filepath.Rel(b.portDir, path)
				files = append(files, filepath.ToSlash(rel))
			}
		}
	}
	return files, nil
}

// patched copies the port's sources and applies the fault's patch to the
// copy. A patch that no longer applies is an error that says so: the
// port's source moved under it.
func (b *builder) patched(f Fault) (string, error) {
	dir := filepath.Join(b.tmpDir, f.Name)
	for _, d := range sourceDirs {
		if err := copyDir(filepath.Join(b.portDir, d), filepath.Join(dir, d)); err != nil {
			return "", err
		}
	}
	// git apply, not patch: no fuzz, the context must match. The copy is
	// outside any work tree; the ceiling keeps git from looking above it.
	cmd := exec.Command("git", "apply", "--verbose", "-")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	cmd.Stdin = strings.NewReader(f.Diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s no longer applies to %s (%v):\n%s\nThe port's source changed under the patch: make the bug again on the new source "+
			"and write the patch anew (docs/faults.md, \"Writing a fault\")", f.File, b.portDir, err, strings.TrimSpace(string(out)))
	}
	return dir, nil
}

func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		text, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), text, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs do(0..n-1) on at most jobs goroutines and returns each
// call's error.
func parallel(jobs, n int, do func(i int) error) []error {
	if jobs < 1 {
		jobs = 1
	}
	errs := make([]error, n)
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = do(i)
		}()
	}
	wg.Wait()
	return errs
}

func first(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
