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
	// The one kernel that writes two buffers (the simulator's
	// increment_pair): a restore must bring both back.
	{"increment_pair", []paramKind{bufferParam, bufferParam}, true, `
	ld.global.u32 %t0, [%elt0];
	add.s32 %t0, %t0, 1;
	st.global.u32 [%elt0], %t0;
	ld.global.u32 %t1, [%elt1];
	add.s32 %t1, %t1, 1;
	st.global.u32 [%elt1], %t1;`},
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
// 8 gives 4 KiB blocks, the page size the simulator tracks.
const compareBlockShift = 8

// compareBlockBytes is the granularity at which Restore finds changes.
const compareBlockBytes = 16 << compareBlockShift

// compareRestorePTX: compare_restore(a, b, flags, nbytes, shift). Each CTA
// takes a tile of 4 vectors a thread (16 bytes each, 16 KiB for 256
// threads); thread t handles vectors tile + t + k*ntid, k = 0..3, so a
// warp's accesses stay contiguous and eight 128-bit loads are in flight.
// Where a vector of a (the live region) differs from b (its saved copy),
// it writes b's bytes back into a and sets the byte flags[v >> shift] = 1.
// One launch both restores the region and finds its write set; several
// threads may store the same 1 (benign). A tile that reaches past nbytes
// takes the vectors one at a time, the last partial one byte by byte.
var compareRestorePTX = func() string {
	var b strings.Builder
	b.WriteString(`
.visible .entry compare_restore(
	.param .u64 a,
	.param .u64 b,
	.param .u64 flags,
	.param .u64 nbytes,
	.param .u32 shift
)
{
	.reg .pred %p<8>;
	.reg .b32 %r<24>;
	.reg .b32 %ra<16>;
	.reg .b32 %rb<16>;
	.reg .b32 %rv<4>;
	.reg .b64 %rd<16>;
	.reg .b64 %ro<4>;
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
	mul.lo.u32 %r5, %r2, %r3;
	shl.b32 %r5, %r5, 2;
	add.u32 %r6, %r5, %r4;
	shl.b32 %r7, %r3, 2;
	add.u32 %r8, %r5, %r7;
	mul.wide.u32 %rd5, %r8, 16;
	setp.gt.u64 %p1, %rd5, %rd4;
	@%p1 bra SLOW;
	mov.u32 %r20, 1;
`)
	for k := 0; k < 4; k++ {
		fmt.Fprintf(&b, "\tmad.lo.u32 %%rv%d, %%r3, %d, %%r6;\n\tmul.wide.u32 %%ro%d, %%rv%d, 16;\n", k, k, k, k)
		fmt.Fprintf(&b, "\tadd.s64 %%rd6, %%rd1, %%ro%d;\n\tld.global.v4.u32 {%%ra%d, %%ra%d, %%ra%d, %%ra%d}, [%%rd6];\n", k, 4*k, 4*k+1, 4*k+2, 4*k+3)
		fmt.Fprintf(&b, "\tadd.s64 %%rd7, %%rd2, %%ro%d;\n\tld.global.v4.u32 {%%rb%d, %%rb%d, %%rb%d, %%rb%d}, [%%rd7];\n", k, 4*k, 4*k+1, 4*k+2, 4*k+3)
	}
	for k := 0; k < 4; k++ {
		fmt.Fprintf(&b, "\txor.b32 %%r10, %%ra%d, %%rb%d;\n\txor.b32 %%r11, %%ra%d, %%rb%d;\n\txor.b32 %%r12, %%ra%d, %%rb%d;\n\txor.b32 %%r13, %%ra%d, %%rb%d;\n",
			4*k, 4*k, 4*k+1, 4*k+1, 4*k+2, 4*k+2, 4*k+3, 4*k+3)
		b.WriteString("\tor.b32 %r10, %r10, %r11;\n\tor.b32 %r12, %r12, %r13;\n\tor.b32 %r10, %r10, %r12;\n")
		fmt.Fprintf(&b, "\tsetp.eq.u32 %%p2, %%r10, 0;\n\t@%%p2 bra SAME%d;\n", k)
		fmt.Fprintf(&b, "\tadd.s64 %%rd6, %%rd1, %%ro%d;\n\tst.global.v4.u32 [%%rd6], {%%rb%d, %%rb%d, %%rb%d, %%rb%d};\n", k, 4*k, 4*k+1, 4*k+2, 4*k+3)
		fmt.Fprintf(&b, "\tshr.u32 %%r14, %%rv%d, %%r1;\n\tcvt.u64.u32 %%rd8, %%r14;\n\tadd.s64 %%rd8, %%rd3, %%rd8;\n\tst.global.u8 [%%rd8], %%r20;\n", k)
		fmt.Fprintf(&b, "SAME%d:\n", k)
	}
	b.WriteString(`	ret;
SLOW:
	mov.u32 %r9, 0;
VEC:
	setp.ge.u32 %p5, %r9, 4;
	@%p5 bra DONE;
	mad.lo.u32 %r15, %r9, %r3, %r6;
	add.u32 %r9, %r9, 1;
	mul.wide.u32 %rd9, %r15, 16;
	setp.ge.u64 %p1, %rd9, %rd4;
	@%p1 bra DONE;
	add.s64 %rd10, %rd9, 16;
	setp.gt.u64 %p2, %rd10, %rd4;
	@%p2 bra TAIL;
	add.s64 %rd6, %rd1, %rd9;
	add.s64 %rd7, %rd2, %rd9;
	ld.global.v4.u32 {%ra0, %ra1, %ra2, %ra3}, [%rd6];
	ld.global.v4.u32 {%rb0, %rb1, %rb2, %rb3}, [%rd7];
	xor.b32 %r10, %ra0, %rb0;
	xor.b32 %r11, %ra1, %rb1;
	xor.b32 %r12, %ra2, %rb2;
	xor.b32 %r13, %ra3, %rb3;
	or.b32 %r10, %r10, %r11;
	or.b32 %r12, %r12, %r13;
	or.b32 %r10, %r10, %r12;
	setp.eq.u32 %p4, %r10, 0;
	@%p4 bra VEC;
	st.global.v4.u32 [%rd6], {%rb0, %rb1, %rb2, %rb3};
	bra FLAG;
TAIL:
	mov.u32 %r10, 0;
	mov.u64 %rd11, %rd9;
LOOP:
	setp.ge.u64 %p3, %rd11, %rd4;
	@%p3 bra TAILDONE;
	add.s64 %rd12, %rd1, %rd11;
	add.s64 %rd13, %rd2, %rd11;
	ld.global.u8 %r16, [%rd12];
	ld.global.u8 %r17, [%rd13];
	st.global.u8 [%rd12], %r17;
	xor.b32 %r16, %r16, %r17;
	or.b32 %r10, %r10, %r16;
	add.s64 %rd11, %rd11, 1;
	bra LOOP;
TAILDONE:
	setp.eq.u32 %p4, %r10, 0;
	@%p4 bra VEC;
FLAG:
	shr.u32 %r14, %r15, %r1;
	cvt.u64.u32 %rd8, %r14;
	add.s64 %rd8, %rd3, %rd8;
	mov.u32 %r18, 1;
	st.global.u8 [%rd8], %r18;
	bra VEC;
DONE:
	ret;
}
`)
	return b.String()
}()

// compareVectorsPerThread is how many vectors a compare_restore thread takes.
const compareVectorsPerThread = 4

// copyChunkBytes bounds one entry of a copy_ranges list: one warp copies
// one entry, so a long span becomes several entries that spread over the
// multiprocessors, and a 4 KiB page still keeps each lane busy.
const copyChunkBytes = 8 << 10

// copyWarpsPerCTA: copy_ranges runs 256 threads a CTA, a warp an entry.
const copyWarpsPerCTA = 8

// copyRangesPTX: copy_ranges(list, count). Warp w of CTA c copies entry
// c*(ntid/32)+w of list, three u64 each: dst, src, bytes. dst and src are
// 16-byte aligned; the 32 lanes stride over 128-bit vectors, four loads in
// flight each, then over the bytes past the last whole vector. One launch
// restores any number of ranges.
const copyRangesPTX = `
.visible .entry copy_ranges(
	.param .u64 list,
	.param .u32 count
)
{
	.reg .pred %p<4>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<24>;
	ld.param.u64 %rd1, [list];
	ld.param.u32 %r1, [count];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %tid.x;
	mov.u32 %r4, %ntid.x;
	shr.u32 %r5, %r4, 5;
	shr.u32 %r6, %r3, 5;
	and.b32 %r7, %r3, 31;
	mad.lo.u32 %r8, %r2, %r5, %r6;
	setp.ge.u32 %p1, %r8, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd2, %r8, 24;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.u64 %rd4, [%rd3];
	ld.global.u64 %rd5, [%rd3+8];
	ld.global.u64 %rd6, [%rd3+16];
	cvta.to.global.u64 %rd4, %rd4;
	cvta.to.global.u64 %rd5, %rd5;
	shr.u64 %rd7, %rd6, 4;
	cvt.u64.u32 %rd8, %r7;
	mov.u64 %rd9, 32;
	mov.u64 %rd10, 128;
	mov.u64 %rd11, 96;
	mov.u64 %rd14, 512;
VLOOP4:
	add.s64 %rd12, %rd8, %rd11;
	setp.ge.u64 %p2, %rd12, %rd7;
	@%p2 bra VLOOP1;
	shl.b64 %rd13, %rd8, 4;
	add.s64 %rd15, %rd5, %rd13;
	add.s64 %rd16, %rd15, %rd14;
	add.s64 %rd17, %rd16, %rd14;
	add.s64 %rd18, %rd17, %rd14;
	ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd15];
	ld.global.v4.u32 {%r14, %r15, %r16, %r17}, [%rd16];
	ld.global.v4.u32 {%r18, %r19, %r20, %r21}, [%rd17];
	ld.global.v4.u32 {%r22, %r23, %r24, %r25}, [%rd18];
	add.s64 %rd15, %rd4, %rd13;
	add.s64 %rd16, %rd15, %rd14;
	add.s64 %rd17, %rd16, %rd14;
	add.s64 %rd18, %rd17, %rd14;
	st.global.v4.u32 [%rd15], {%r10, %r11, %r12, %r13};
	st.global.v4.u32 [%rd16], {%r14, %r15, %r16, %r17};
	st.global.v4.u32 [%rd17], {%r18, %r19, %r20, %r21};
	st.global.v4.u32 [%rd18], {%r22, %r23, %r24, %r25};
	add.s64 %rd8, %rd8, %rd10;
	bra VLOOP4;
VLOOP1:
	setp.ge.u64 %p2, %rd8, %rd7;
	@%p2 bra TAIL;
	shl.b64 %rd13, %rd8, 4;
	add.s64 %rd15, %rd5, %rd13;
	ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd15];
	add.s64 %rd16, %rd4, %rd13;
	st.global.v4.u32 [%rd16], {%r10, %r11, %r12, %r13};
	add.s64 %rd8, %rd8, %rd9;
	bra VLOOP1;
TAIL:
	shl.b64 %rd19, %rd7, 4;
	cvt.u64.u32 %rd20, %r7;
	add.s64 %rd19, %rd19, %rd20;
TLOOP:
	setp.ge.u64 %p3, %rd19, %rd6;
	@%p3 bra DONE;
	add.s64 %rd21, %rd5, %rd19;
	ld.global.u8 %r30, [%rd21];
	add.s64 %rd22, %rd4, %rd19;
	st.global.u8 [%rd22], %r30;
	add.s64 %rd19, %rd19, %rd9;
	bra TLOOP;
DONE:
	ret;
}
`

// flushL2PTX: flush_l2(buf, vectors). The threads stride over the 16-byte
// vectors of buf, loading each through the L2 only (ld.global.cg) and
// folding them with xor; a thread stores its fold only if it equals a
// constant, so the loads cannot be dropped. Reading more than the L2
// holds evicts what a restore or an earlier pass left there, and the dirty
// lines are written back now, before the counted kernel, which then finds
// a cache of clean lines it does not use (Nsight Compute's
// --cache-control all; flushCaches).
const flushL2PTX = `
.visible .entry flush_l2(
	.param .u64 buf,
	.param .u64 vectors
)
{
	.reg .pred %p<3>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [buf];
	ld.param.u64 %rd2, [vectors];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mov.u32 %r4, %nctaid.x;
	mad.lo.u32 %r5, %r1, %r2, %r3;
	cvt.u64.u32 %rd3, %r5;
	mul.lo.u32 %r6, %r2, %r4;
	cvt.u64.u32 %rd4, %r6;
	mov.u32 %r7, 0;
LOOP:
	setp.ge.u64 %p1, %rd3, %rd2;
	@%p1 bra FOLDED;
	shl.b64 %rd5, %rd3, 4;
	add.s64 %rd6, %rd1, %rd5;
	ld.global.cg.v4.u32 {%r8, %r9, %r10, %r11}, [%rd6];
	xor.b32 %r7, %r7, %r8;
	xor.b32 %r7, %r7, %r9;
	xor.b32 %r7, %r7, %r10;
	xor.b32 %r7, %r7, %r11;
	add.s64 %rd3, %rd3, %rd4;
	bra LOOP;
FOLDED:
	setp.ne.u32 %p2, %r7, 1640531527;
	@%p2 bra DONE;
	st.global.u32 [%rd1], %r7;
DONE:
	ret;
}
`

// internalKernels are the runtime's own entries in the module.
var internalKernels = []string{"compare_restore", "copy_ranges", "flush_l2"}

// modulePTX is the whole library as one NUL-terminated module image, as
// cuModuleLoadDataEx wants PTX text.
func modulePTX() []byte {
	var b strings.Builder
	b.WriteString(ptxHeader)
	for _, k := range kernelLibrary {
		b.WriteString(entryPTX(k))
	}
	b.WriteString(compareRestorePTX)
	b.WriteString(copyRangesPTX)
	b.WriteString(flushL2PTX)
	b.WriteByte(0)
	return []byte(b.String())
}
