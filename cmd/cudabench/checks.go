package main

import (
	"fmt"

	"github.com/replayspec/replayspec/hsa"
)

const checkElems = 1 << 20

// kernelCheck runs one kernel on fresh buffers and says whether element i
// of the first buffer came out as want(i).
type kernelCheck struct {
	kernel string
	inputs [][]int32 // initial buffers, in argument order
	scalar *int32
	grid   uint32
	want   func(i int) int32
}

func seq(f func(i int) int32) []int32 {
	v := make([]int32, checkElems)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

func scalar(v int32) *int32 { return &v }

func kernelChecks() []kernelCheck {
	x := func(i int) int32 { return int32(i) }
	y := func(i int) int32 { return int32(7 - 2*i) }
	return []kernelCheck{
		{"increment", [][]int32{seq(x)}, nil, checkElems, func(i int) int32 { return int32(i) + 1 }},
		{"accumulate", [][]int32{seq(y), seq(x)}, nil, checkElems, func(i int) int32 { return y(i) + x(i) }},
		{"fill", [][]int32{seq(x)}, scalar(-5), checkElems, func(int) int32 { return -5 }},
		{"saxpy", [][]int32{seq(y), seq(x)}, scalar(3), checkElems, func(i int) int32 { return 3*x(i) + y(i) }},
		{"atomic_counter", [][]int32{{10}}, nil, checkElems, func(int) int32 { return 10 + checkElems }},
	}
}

// checkKernels is part (a): every kernel's effect, element by element.
func (b *bench) checkKernels(t *table) (failed bool) {
	for _, c := range kernelChecks() {
		err := b.runCheck(c)
		result := "ok"
		if err != nil {
			result, failed = "FAIL: "+err.Error(), true
		}
		t.row(fmt.Sprintf("kernel `%s` effect (%d work items)", c.kernel, c.grid), result, "", "ok")
	}
	return failed
}

func (b *bench) runCheck(c kernelCheck) error {
	var args []hsa.Arg
	var first hsa.Allocation
	for i, in := range c.inputs {
		a, err := b.upload(in)
		if err != nil {
			return err
		}
		defer b.rt.Free(a)
		if i == 0 {
			first = a
		}
		args = append(args, arg(a))
	}
	if c.scalar != nil {
		args = append(args, hsa.Arg{Scalar: *c.scalar})
	}
	if err := b.launch(c.kernel, c.grid, args...); err != nil {
		return err
	}
	got, err := b.download(first, 0, uint64(len(c.inputs[0])))
	if err != nil {
		return err
	}
	for i, v := range got {
		if w := c.want(i); v != w {
			return fmt.Errorf("element %d = %d, want %d", i, v, w)
		}
	}
	return nil
}

// proveRestore is part (b): increment a buffer, snapshot it, run four
// passes of increment with a restore before passes 1..3; the buffer must
// hold exactly one more increment, in every restore mode.
func (b *bench) proveRestore(t *table) (failed bool) {
	for _, m := range restoreModes {
		err := b.replayOnce(m.mode)
		result := "ok: one increment after 4 passes"
		if err != nil {
			result, failed = "FAIL: "+err.Error(), true
		}
		t.row(fmt.Sprintf("restore is real (%s, 4 passes)", m.name), result, "", "ok")
	}
	return failed
}

func (b *bench) replayOnce(mode cudaMode) error {
	b.rt.SetRestoreMode(mode)
	a, err := b.upload(make([]int32, checkElems))
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	if err := b.launch("increment", checkElems, arg(a)); err != nil {
		return err
	}
	snap, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
	if err != nil {
		return err
	}
	defer snap.Release()
	if err := b.passes(snap, 4, "increment", checkElems, arg(a)); err != nil {
		return err
	}
	got, err := b.download(a, 0, checkElems)
	if err != nil {
		return err
	}
	for i, v := range got {
		if v != 2 {
			return fmt.Errorf("element %d = %d, want 2", i, v)
		}
	}
	return nil
}

// passes is the replay loop: n passes, restore before every pass but the
// first, none after the last.
func (b *bench) passes(snap hsa.Snapshot, n int, kernel string, grid uint32, args ...hsa.Arg) error {
	for p := range n {
		if p > 0 {
			if _, err := snap.Restore(); err != nil {
				return err
			}
		}
		if err := b.launch(kernel, grid, args...); err != nil {
			return err
		}
	}
	return nil
}
