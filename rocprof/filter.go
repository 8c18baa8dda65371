package rocprof

import (
	"regexp"
	"strings"
	"sync"
)

// kernelFilter is the tool library's targeting of counter collection
// (tool.cpp, kernel_iteration_filter.hpp): a kernel is targeted when its
// name matches --kernel-include-regex (default ".*") and not
// --kernel-exclude-regex; a targeted kernel's launches are numbered from 1,
// and --kernel-iteration-range keeps the listed launches (empty: all). The
// decision is taken once per logical dispatch and remembered by dispatch id,
// so a replayed dispatch (one launch, several executions) is judged once:
// at CONFIG under kernel replay, at the first pass's counter callback
// otherwise. Kernel tracing is not filtered.
type kernelFilter struct {
	include, exclude *regexp.Regexp
	launches         map[uint64]bool // empty: every launch

	mu       sync.Mutex
	count    map[string]uint64 // kernel -> targeted launches so far
	decision map[uint64]bool   // dispatch id -> collected or not
}

func newKernelFilter(cfg Config) *kernelFilter {
	f := &kernelFilter{count: map[string]uint64{}, decision: map[uint64]bool{}}
	v := cfg.Values
	if v.has("kernel_include_regex") {
		f.include = regexp.MustCompile(v.str("kernel_include_regex")) // checked by Plan
	}
	if v.has("kernel_exclude_regex") && v.str("kernel_exclude_regex") != "" {
		f.exclude = regexp.MustCompile(v.str("kernel_exclude_regex"))
	}
	if v.has("kernel_iteration_range") {
		f.launches, _ = parseIterationRange(strings.Join(v.list("kernel_iteration_range"), ", "))
	}
	return f
}

// active reports whether any filter is configured.
func (f *kernelFilter) active() bool {
	return f.include != nil || f.exclude != nil || len(f.launches) > 0
}

// targets decides (once per dispatch id) whether the dispatch's counters
// are collected.
func (f *kernelFilter) targets(dispatch uint64, kernel string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.decision[dispatch]; ok {
		return d
	}
	d := f.targeted(kernel)
	if d {
		f.count[kernel]++
		d = len(f.launches) == 0 || f.launches[f.count[kernel]]
	}
	f.decision[dispatch] = d
	return d
}

func (f *kernelFilter) targeted(kernel string) bool {
	if f.include != nil && !f.include.MatchString(kernel) {
		return false
	}
	return f.exclude == nil || !f.exclude.MatchString(kernel)
}
