package cuda

import (
	"fmt"
	"strings"
)

// paramKind is what an application argument of a library kernel is.
type paramKind int

const (
	bufferParam paramKind = iota + 1 // an hsa.Arg buffer: a device pointer to int32
	scalarParam                      // an hsa.Arg scalar: int32
)

// kernelSpec is one application kernel of the library. Every kernel also
// takes a trailing u32 n, the number of work items allowed to touch memory,
// which the runtime computes (see elementCount) and the kernel guards i < n.
type kernelSpec struct {
	name   string
	params []paramKind
	// perItem is true when work item i touches element i of every buffer;
	// false for kernels that touch a fixed element (atomic_counter).
	perItem bool
	// body is the PTX after the prologue: %elt<k> holds &buffer_k[i],
	// %buf<k> buffer k's base, %s<k> scalar k.
	body string
}

var kernelLibrary = []kernelSpec{
	{"increment", []paramKind{bufferParam}, true, `
	ld.global.u32 %t0, [%elt0];
	add.s32 %t0, %t0, 1;
	st.global.u32 [%elt0], %t0;`},
	{"accumulate", []paramKind{bufferParam, bufferParam}, true, `
	ld.global.u32 %t0, [%elt0];
	ld.global.u32 %t1, [%elt1];
	add.s32 %t0, %t0, %t1;
	st.global.u32 [%elt0], %t0;`},
	{"atomic_counter", []paramKind{bufferParam}, false, `
	red.global.add.u32 [%buf0], 1;`},
	{"fill", []paramKind{bufferParam, scalarParam}, true, `
	st.global.u32 [%elt0], %s0;`},
	{"saxpy", []paramKind{bufferParam, bufferParam, scalarParam}, true, `
	ld.global.u32 %t0, [%elt0];
	ld.global.u32 %t1, [%elt1];
	mad.lo.s32 %t0, %s0, %t1, %t0;
	st.global.u32 [%elt0], %t0;`},
}

func findKernel(name string) (kernelSpec, bool) {
	for _, k := range kernelLibrary {
		if k.name == name {
			return k, true
		}
	}
	return kernelSpec{}, false
}

// ptxHeader: PTX 6.0 for sm_52 is old enough for every driver in use and
// JIT-compiles to any newer GPU, the H200 included (HARDWARE.md).
const ptxHeader = `.version 6.0
.target sm_52
.address_size 64
`

// entryPTX writes one library kernel: a 1-D prologue that computes the work
// item index i, returns when i >= n, and loads the arguments.
func entryPTX(k kernelSpec) string {
	var b strings.Builder
	var params []string
	var loads []string
	nb, ns := 0, 0
	for i, p := range k.params {
		switch p {
		case bufferParam:
			params = append(params, fmt.Sprintf("\t.param .u64 p%d", i))
			loads = append(loads,
				fmt.Sprintf("\tld.param.u64 %%buf%d, [p%d];", nb, i),
				fmt.Sprintf("\tcvta.to.global.u64 %%buf%d, %%buf%d;", nb, nb),
				fmt.Sprintf("\tadd.s64 %%elt%d, %%buf%d, %%off;", nb, nb))
			nb++
		case scalarParam:
			params = append(params, fmt.Sprintf("\t.param .s32 p%d", i))
			loads = append(loads, fmt.Sprintf("\tld.param.s32 %%s%d, [p%d];", ns, i))
			ns++
		}
	}
	params = append(params, "\t.param .u32 n")
	fmt.Fprintf(&b, "\n.visible .entry %s(\n%s\n)\n{\n", k.name, strings.Join(params, ",\n"))
	b.WriteString(`	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b32 %t<4>;
	.reg .b32 %s<4>;
	.reg .b64 %buf<4>;
	.reg .b64 %elt<4>;
	.reg .b64 %off;
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.u32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %off, %r5, 4;
`)
	b.WriteString(strings.Join(loads, "\n"))
	b.WriteString(k.body)
	b.WriteString("\nDONE:\n\tret;\n}\n")
	return b.String()
}

// compareBlockShift is log2 of the 16-byte vectors per restore block:
// 12 gives 64 KiB blocks.
const compareBlockShift = 12

// compareBlockBytes is the granularity at which Restore finds changes.
const compareBlockBytes = 16 << compareBlockShift

// comparePTX: compare(a, b, flags, nbytes, shift). Work item i compares
// bytes [16i, 16i+16) of a and b (one 128-bit load each; the last partial
// vector byte by byte) and, when they differ, sets flags[i >> shift] = 1.
// Several items may store the same 1: a benign race.
const comparePTX = `
.visible .entry compare(
	.param .u64 a,
	.param .u64 b,
	.param .u64 flags,
	.param .u64 nbytes,
	.param .u32 shift
)
{
	.reg .pred %p<6>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<16>;
	ld.param.u64 %rd1, [a];
	ld.param.u64 %rd2, [b];
	ld.param.u64 %rd3, [flags];
	ld.param.u64 %rd4, [nbytes];
	ld.param.u32 %r1, [shift];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd3, %rd3;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.u32 %r5, %r2, %r3, %r4;
	mul.wide.u32 %rd5, %r5, 16;
	setp.ge.u64 %p1, %rd5, %rd4;
	@%p1 bra DONE;
	add.s64 %rd8, %rd5, 16;
	setp.gt.u64 %p2, %rd8, %rd4;
	@%p2 bra TAIL;
	add.s64 %rd6, %rd1, %rd5;
	add.s64 %rd7, %rd2, %rd5;
	ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd6];
	ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd7];
	xor.b32 %r6, %r6, %r10;
	xor.b32 %r7, %r7, %r11;
	xor.b32 %r8, %r8, %r12;
	xor.b32 %r9, %r9, %r13;
	or.b32 %r6, %r6, %r7;
	or.b32 %r8, %r8, %r9;
	or.b32 %r14, %r6, %r8;
	bra CHECK;
TAIL:
	mov.u32 %r14, 0;
	mov.u64 %rd9, %rd5;
LOOP:
	setp.ge.u64 %p3, %rd9, %rd4;
	@%p3 bra CHECK;
	add.s64 %rd10, %rd1, %rd9;
	add.s64 %rd11, %rd2, %rd9;
	ld.global.u8 %r15, [%rd10];
	ld.global.u8 %r16, [%rd11];
	xor.b32 %r15, %r15, %r16;
	or.b32 %r14, %r14, %r15;
	add.s64 %rd9, %rd9, 1;
	bra LOOP;
CHECK:
	setp.eq.u32 %p4, %r14, 0;
	@%p4 bra DONE;
	shr.u32 %r17, %r5, %r1;
	mul.wide.u32 %rd12, %r17, 4;
	add.s64 %rd13, %rd3, %rd12;
	st.global.u32 [%rd13], 1;
DONE:
	ret;
}
`

// modulePTX is the whole library as one NUL-terminated module image, as
// cuModuleLoadDataEx wants PTX text.
func modulePTX() []byte {
	var b strings.Builder
	b.WriteString(ptxHeader)
	for _, k := range kernelLibrary {
		b.WriteString(entryPTX(k))
	}
	b.WriteString(comparePTX)
	b.WriteByte(0)
	return []byte(b.String())
}
