package trace

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The fast event decoder: a hand-written scanner for the one schema of an
// event line, into a reused Event, without reflection. encoding/json was
// three quarters of the CPU of `replayspec check` (~11 µs an event).
//
// It takes only the plain form that writers produce: keys spelt exactly as
// Event's tags, each at most once; strings without escapes, valid UTF-8;
// integers without fraction or exponent; no null; every Dim3 of three
// elements. Anything else (an escape, a key in other case, which
// encoding/json would match, a duplicate key, null, a number it does not
// fit, any syntax error) makes it give up, and the line is decoded again
// by DecodeStrict: what is accepted, the Event it gives, and every error
// message stay exactly those of encoding/json (FuzzDecodeEvent compares
// the two on every line of the goldens and more).
//
// Within that form it guesses before it reads, and checks each guess on
// the line's bytes: the next key (the one that followed the last time,
// after this key on a line of this type), a line's type (the one that
// followed the last line's type), a field's name (the one it had last),
// corr and info in the writer's key order. A wrong guess costs a compare;
// the line is then read the general way, in any key order.
// TestDecodePredictedKeys, TestDecodeKeysInAnyOrder and
// TestDecoderNamesThatBeginAlike hold the guesses to that.

// eventDecoder decodes event lines. It keeps the names it has read last,
// so that the names a trace repeats line after line (types, operations,
// kernels, labels, counters) are one string each rather than one a line;
// and the lists it is reading, so that a list is allocated once, at its
// size.
//
// It also keeps the last few lists and small objects it gave (payload
// member lists, regions, runs, correlation ids, dispatch infos) and gives
// an equal one again rather than a copy: a dispatch's events repeat them
// line after line, and each copy was an allocation for the collector (2.5
// an event). Events share them as they share the U64 pointers: nothing
// writes through an event's slices or pointers.
type eventDecoder struct {
	names    [nameSlots]string // by hash; a name that lands on another replaces it
	strs     []string
	groups   [][]string
	counters []Counter
	regions  []Region
	runs     []Run

	lists      recent[[]string]
	regionSets recent[[]Region]
	runSets    recent[[]Run]
	corrs      recent[*Corr]
	infos      recent[*DispatchInfo]

	// The same, by the text they were read from: a line that has that
	// text where such a value begins has that value, and is not read
	// again (a callback's payload list was six names to look up).
	listTexts   recent[memo[[]string]]
	regionTexts recent[memo[[]Region]]
	corrTexts   recent[memo[*Corr]]
	infoTexts   recent[memo[*DispatchInfo]]

	// lastNames is the last name each field of an event had (nameOf).
	lastNames [len(eventKeys)]string

	// typeAfter is, by the name slot of a line's type, the type of the
	// line after it the last time (nameSlots: none); lastType is the slot
	// of the last type.
	typeAfter [nameSlots + 1]typeGuess
	lastType  int

	// next is event's predictions: by the name slot of the line's type
	// (nameSlots before it), the field number of the key that followed
	// each key (len(eventKeys) at the start) the last time.
	next [nameSlots + 1][len(eventKeys) + 1]uint8
}

// typeGuess is a type name and its name slot.
type typeGuess struct {
	name string
	slot int
}

// memo is a value and the text it was read from (a copy: lines are
// reused).
type memo[T any] struct {
	text []byte
	v    T
}

// recall returns the value of r whose text the line has next, past any
// whitespace, and steps over that text; the text is the whole of the
// value, so reading it would give the same value and stop at the same
// place.
func recall[T any](s *scanner, r *recent[memo[T]]) (T, bool) {
	s.space()
	rest := s.b[s.i:]
	m, ok := r.find(func(m memo[T]) bool { return bytes.HasPrefix(rest, m.text) })
	if ok {
		s.i += len(m.text)
	}
	return m.v, ok
}

// remember keeps v, read from the line from start, in r.
func remember[T any](s *scanner, r *recent[memo[T]], start int, v T) {
	if s.ok {
		r.keep(memo[T]{bytes.Clone(s.b[start:s.i]), v})
	}
}

// recentSlots is how many of each kind a decoder keeps.
const recentSlots = 8

// recent is the last few values of a kind the decoder gave, newest at
// next-1 (a ring).
type recent[T any] struct {
	v    [recentSlots]T
	n    int // how many are set
	next int
}

// find returns the kept value that same says is equal, if any.
func (r *recent[T]) find(same func(T) bool) (T, bool) {
	for k := 1; k <= r.n; k++ { // newest first: the one repeated most
		v := r.v[(r.next-k+recentSlots)%recentSlots]
		if same(v) {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func (r *recent[T]) keep(v T) {
	r.v[r.next] = v
	r.next = (r.next + 1) % recentSlots
	r.n = min(r.n+1, recentSlots)
}

// shared returns a list equal to xs from r, or a copy of xs at its size
// (empty, not nil, when xs is empty), kept in r.
func shared[T comparable](r *recent[[]T], xs []T) []T {
	if v, ok := r.find(func(v []T) bool { return slices.Equal(v, xs) }); ok {
		return v
	}
	v := clone(xs)
	r.keep(v)
	return v
}

// nameSlots is how many names a decoder keeps: more than the names of a
// loop's events, few enough to stay in cache.
const nameSlots = 1024

// nameSlot is the slot of name r: a hash of its first and last eight bytes
// (fewer in a shorter name) and its length, which tells apart every name
// of sixteen bytes or less and costs a multiply. Longer names that differ
// only in their middle share a slot and take it from each other, which
// costs a copy, never a wrong name: a slot is compared whole before use.
func nameSlot(r []byte) int {
	n := len(r)
	var a, b uint64
	switch {
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(r), binary.LittleEndian.Uint64(r[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(r)), uint64(binary.LittleEndian.Uint32(r[n-4:]))
	case n > 0:
		a = uint64(r[0]) | uint64(r[n/2])<<8 | uint64(r[n-1])<<16
	}
	hi, lo := bits.Mul64(a^0x9e3779b97f4a7c15, b^uint64(n)^0xd6e8feb86659fd93)
	return int((hi ^ lo) % nameSlots)
}

// decode decodes line b into e as DecodeStrict does, clearing e first
// (decoding into a used event would reuse its lists).
func (d *eventDecoder) decode(b []byte, e *Event) error {
	*e = Event{}
	if d.fast(b, e) {
		return nil
	}
	*e = Event{} // the scan may have set some fields before it gave up
	return DecodeStrict(b, e)
}

// fast decodes b into the zero Event e and reports whether it could; when
// it could not, e holds part of the line.
func (d *eventDecoder) fast(b []byte, e *Event) bool {
	s := scanner{b: b, d: d}
	s.event(e)
	s.space()
	return s.ok && s.i == len(s.b)
}

// scanner walks one line. The first thing it does not take clears ok;
// after that every step is a no-op, and the caller falls back.
type scanner struct {
	b  []byte
	i  int
	ok bool
	d  *eventDecoder
	// lastSlot is the name slot of the last name read (nameSlots for
	// none).
	lastSlot int
}

func (s *scanner) fail() { s.ok = false; s.i = len(s.b) }

// space skips JSON's four whitespace bytes. A writer puts none, so the
// first test is the one that counts.
func (s *scanner) space() {
	i, b := s.i, s.b
	if i < len(b) && b[i] > ' ' {
		return
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	s.i = i
}

// byte takes c, after any whitespace.
func (s *scanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	s.fail()
	return false
}

// peek is the next byte after whitespace (0 at the end).
func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object calls field with each key of an object in turn; field reads the
// value or fails the scan.
func (s *scanner) object(field func(key []byte)) {
	if !s.byte('{') {
		return
	}
	if s.peek() == '}' {
		s.i++
		return
	}
	for s.ok {
		key := s.raw()
		if !s.byte(':') {
			return
		}
		field(key)
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.fail()
		}
	}
}

// array calls elem for each element of an array; elem reads it or fails.
// An empty array still calls nothing.
func (s *scanner) array(elem func()) {
	if !s.byte('[') {
		return
	}
	if s.peek() == ']' {
		s.i++
		return
	}
	for s.ok {
		elem()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.fail()
		}
	}
}

// raw reads a string and returns its bytes, which are the line's own: it
// takes only strings that decode to themselves (no escape, no control
// byte, valid UTF-8).
func (s *scanner) raw() []byte {
	if s.i < len(s.b) && s.b[s.i] == '"' { // the writer's way, tried first
		s.i++
	} else if !s.byte('"') {
		return nil
	}
	b, start := s.b, s.i
	i := start
	for i+8 <= len(b) { // eight bytes at a time
		if m := specialBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
		i += 8
	}
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	if i < len(b) && b[i] >= utf8.RuneSelf {
		for i < len(b) && (plainByte[b[i]] || b[i] >= utf8.RuneSelf) {
			i++
		}
		if i < len(b) && b[i] == '"' && !utf8.Valid(b[start:i]) { // encoding/json would put U+FFFD for each bad byte
			s.fail()
			return nil
		}
	}
	if i == len(b) || b[i] != '"' { // an escape, a control byte, bad UTF-8 or no end
		s.fail()
		return nil
	}
	s.i = i + 1
	return b[start:i]
}

// specialBytes marks, with its high bit, each byte of x that is not
// plainByte; the lowest mark is right, those above it may be false (a
// borrow carries into the next byte), which is all raw needs.
func specialBytes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := func(x uint64, n byte) uint64 { return (x - ones*uint64(n)) &^ x & highs } // bytes < n, for n <= 0x80
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return below(x, ' ') | below(q, 1) | below(bs, 1) | x&highs
}

// plainByte is the ASCII bytes that stand for themselves in a JSON string.
var plainByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// name reads a string, shared with earlier lines that had the same one.
func (s *scanner) name() string {
	r := s.raw()
	if len(r) == 0 {
		s.lastSlot = nameSlots
		return ""
	}
	s.lastSlot = nameSlot(r)
	slot := &s.d.names[s.lastSlot]
	if *slot != string(r) { // no allocation to compare
		*slot = string(r)
	}
	return *slot
}

// nameOf reads the string value of field k: when the line has, quoted, the
// name that field had last, it is that name, compared and not hashed (a
// dispatch's events repeat its kernel and label, a pass its op and phase).
// Such a name holds no quote or backslash, so its quotes are the string's.
func (s *scanner) nameOf(k int) string {
	last := &s.d.lastNames[k]
	if s.quoted(*last) {
		return *last
	}
	v := s.name()
	*last = v
	return v
}

// quoted takes name, quoted, when the line has it at the cursor; name is
// one that name gave, so it holds no quote or backslash and its quotes
// are the string's.
func (s *scanner) quoted(name string) bool {
	b, i, n := s.b, s.i, len(name)
	if n > 0 && i+n+2 <= len(b) && b[i] == '"' && b[i+n+1] == '"' && string(b[i+1:i+1+n]) == name {
		s.i = i + n + 2
		return true
	}
	return false
}

// str reads a string that is not expected to repeat (a message).
func (s *scanner) str() string {
	r := s.raw()
	if !s.ok || len(r) == 0 {
		return ""
	}
	return string(r)
}

// digits reads an unsigned integer: "0" or digits not starting with 0, at
// most max. A fraction or an exponent is left for the caller's next
// step, which fails on it.
func (s *scanner) digits(max uint64) uint64 {
	b, i := s.b, s.i
	if i < len(b) && b[i] <= ' ' {
		s.space()
		i = s.i
	}
	start := i
	if i+1 < len(b) && b[i]-'0' <= 9 && b[i+1]-'0' > 9 { // one digit, as most are (ids, passes)
		v := uint64(b[i] - '0')
		if v > max {
			s.fail()
			return 0
		}
		s.i = i + 1
		return v
	}
	var v uint64
	if len(b)-i >= 8 { // the first eight bytes at once: a writer's numbers are most often all in them
		x := binary.LittleEndian.Uint64(b[i:])
		n := digitRun(x)
		if n < 8 {
			if n == 0 || (n > 1 && b[i] == '0') {
				s.fail()
				return 0
			}
			v = eightDigits(x << (64 - 8*n)) // the digits at the top, below them zeros
			if v > max {
				s.fail()
				return 0
			}
			s.i = i + n
			return v
		}
		v, i = eightDigits(x), i+8
	}
	for i < len(b) && b[i]-'0' <= 9 && i-start < 19 { // 19 digits cannot overflow
		v = v*10 + uint64(b[i]-'0')
		i++
	}
	if i < len(b) && b[i]-'0' <= 9 { // a 20th digit: only MaxUint64's size has one
		hi, lo := bits.Mul64(v, 10)
		lo, carry := bits.Add64(lo, uint64(b[i]-'0'), 0)
		i++
		if hi != 0 || carry != 0 || (i < len(b) && b[i]-'0' <= 9) {
			s.fail()
			return 0
		}
		v = lo
	}
	if n := i - start; n == 0 || (n > 1 && b[start] == '0') || v > max {
		s.fail()
		return 0
	}
	s.i = i
	return v
}

// digitRun is how many of the eight bytes of x, first in its low byte, are
// ASCII digits before the first that is not (8: all are).
func digitRun(x uint64) int {
	const ones = 0x0101010101010101
	// A byte is a digit when its high nibble is 3 and adding 6 leaves it
	// 3; a carry out of a byte happens only past a non-digit, which is
	// before any byte it could spoil.
	nd := (x&(ones*0xf0) ^ ones*0x30) | ((x+ones*0x06)&(ones*0xf0) ^ ones*0x30)
	nz := ((nd&(ones*0x7f) + ones*0x7f) | nd) & (ones * 0x80) // the high bit of each non-zero byte
	return bits.TrailingZeros64(nz) / 8
}

// eightDigits is the value of the eight ASCII digits of x, the most
// significant in its low byte (zero bytes count as leading zeros).
func eightDigits(x uint64) uint64 {
	const ones = 0x0101010101010101
	x = (x | ones*0x30) - ones*0x30 // zero bytes stay zero; no byte borrows
	x = (x*10 + x>>8) & 0x00ff00ff00ff00ff
	x = (x*100 + x>>16) & 0x0000ffff0000ffff
	return (x*10000 + x>>32) & 0xffffffff
}

func (s *scanner) u64() uint64 { return s.digits(math.MaxUint64) }

func (s *scanner) u32() uint32 { return uint32(s.digits(math.MaxUint32)) }

// i64 reads a signed integer that fits in bits bits.
func (s *scanner) i64(bits int) int64 {
	max := uint64(1)<<(bits-1) - 1
	if s.peek() == '-' {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] < '0' || s.b[s.i] > '9') {
			s.fail() // "- 1": no whitespace after the sign
			return 0
		}
		return -int64(s.digits(max + 1)) // -(1<<63) wraps to itself
	}
	return int64(s.digits(max))
}

func (s *scanner) boolean() bool {
	s.space()
	switch {
	case hasPrefix(s.b[s.i:], "true"):
		s.i += 4
		return true
	case hasPrefix(s.b[s.i:], "false"):
		s.i += 5
		return false
	}
	s.fail()
	return false
}

// lit takes p when the line has it at the cursor, with no whitespace
// before it; when not, it moves nothing and the caller reads otherwise.
func (s *scanner) lit(p string) bool {
	if hasPrefix(s.b[s.i:], p) {
		s.i += len(p)
		return true
	}
	return false
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// names reads an array of strings; an empty array is an empty slice, not
// nil, as encoding/json makes it.
func (s *scanner) names() []string {
	return memoized(s, &s.d.listTexts, s.readNames)
}

func (s *scanner) readNames() []string {
	tmp := s.d.strs[:0]
	s.array(func() { tmp = append(tmp, s.name()) })
	s.d.strs = tmp
	if !s.ok {
		return nil
	}
	return shared(&s.d.lists, tmp)
}

// clone is a copy of xs at its size; empty, not nil, when xs is empty.
func clone[T any](xs []T) []T {
	out := make([]T, len(xs))
	copy(out, xs)
	return out
}

func (s *scanner) dim3() Dim3 {
	var d Dim3
	n := 0
	s.array(func() {
		if n == len(d) { // encoding/json drops the extra elements
			s.fail()
			return
		}
		d[n] = s.u32()
		n++
	})
	if n != len(d) { // and zeroes the missing ones
		s.fail()
	}
	return d
}

// once marks field bit as seen and fails on a second time: encoding/json
// takes the last of duplicate keys, reusing what the first allocated.
func (s *scanner) once(seen *uint64, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		s.fail()
		return false
	}
	*seen |= 1 << bit
	return true
}

func (s *scanner) corr() *Corr {
	return sharedValue(s, &s.d.corrTexts, &s.d.corrs, func() (c Corr) { s.corrInto(&c); return c })
}

// sharedValue reads a value of T with read, giving the pointer it gave
// lately for the same text or an equal value rather than a new one.
func sharedValue[T comparable](s *scanner, texts *recent[memo[*T]], values *recent[*T], read func() T) *T {
	return memoized(s, texts, func() *T {
		v := read()
		if !s.ok {
			return nil
		}
		if q, ok := values.find(func(q *T) bool { return *q == v }); ok {
			return q
		}
		p := new(T) // not &v: v would be on the heap for every value read
		*p = v
		values.keep(p)
		return p
	})
}

// memoized is what read gives, or what it gave lately for the same text.
func memoized[T any](s *scanner, texts *recent[memo[T]], read func() T) T {
	if v, ok := recall(s, texts); ok {
		return v
	}
	start := s.i
	v := read()
	remember(s, texts, start, v)
	return v
}

func (s *scanner) corrInto(c *Corr) {
	// The writer's form first: its keys in its order, no whitespace.
	start := s.i
	if s.lit(`{"internal":`) {
		c.Internal = s.u64()
		if s.lit(`,"external":`) {
			c.External = s.u64()
			if s.lit(`,"ancestor":`) {
				c.Ancestor = s.u64()
				if s.lit(`}`) {
					return
				}
			}
		}
	}
	if !s.ok {
		return
	}
	s.i, *c = start, Corr{} // any other form, from its start
	var seen uint64
	s.object(func(key []byte) {
		switch string(key) {
		case "internal":
			if s.once(&seen, 0) {
				c.Internal = s.u64()
			}
		case "external":
			if s.once(&seen, 1) {
				c.External = s.u64()
			}
		case "ancestor":
			if s.once(&seen, 2) {
				c.Ancestor = s.u64()
			}
		default:
			s.fail()
		}
	})
}

func (s *scanner) info() *DispatchInfo {
	return sharedValue(s, &s.d.infoTexts, &s.d.infos, func() (in DispatchInfo) { s.infoInto(&in); return in })
}

func (s *scanner) infoInto(in *DispatchInfo) {
	// The writer's form first, as corrInto.
	start := s.i
	if s.lit(`{"size":`) {
		in.Size = s.u64()
		if s.lit(`,"kernel_id":`) {
			in.KernelID = s.u64()
			if s.lit(`,"private_segment_size":`) {
				in.PrivateSegment = s.u32()
				if s.lit(`,"group_segment_size":`) {
					in.GroupSegment = s.u32()
					if s.lit(`,"workgroup":`) {
						in.Workgroup = s.dim3()
						if s.lit(`,"grid":`) {
							in.Grid = s.dim3()
							if s.lit(`}`) {
								return
							}
						}
					}
				}
			}
		}
	}
	if !s.ok {
		return
	}
	s.i, *in = start, DispatchInfo{}
	var seen uint64
	s.object(func(key []byte) {
		switch string(key) {
		case "size":
			if s.once(&seen, 0) {
				in.Size = s.u64()
			}
		case "kernel_id":
			if s.once(&seen, 1) {
				in.KernelID = s.u64()
			}
		case "private_segment_size":
			if s.once(&seen, 2) {
				in.PrivateSegment = s.u32()
			}
		case "group_segment_size":
			if s.once(&seen, 3) {
				in.GroupSegment = s.u32()
			}
		case "workgroup":
			if s.once(&seen, 4) {
				in.Workgroup = s.dim3()
			}
		case "grid":
			if s.once(&seen, 5) {
				in.Grid = s.dim3()
			}
		default:
			s.fail()
		}
	})
}

func (s *scanner) counters() []Counter {
	out := s.d.counters[:0]
	s.array(func() {
		var c Counter
		var seen uint64
		s.object(func(key []byte) {
			switch string(key) {
			case "name":
				if s.once(&seen, 0) {
					c.Name = s.name()
				}
			case "value":
				if s.once(&seen, 1) {
					c.Value = s.u64()
				}
			default:
				s.fail()
			}
		})
		out = append(out, c)
	})
	s.d.counters = out
	return clone(out)
}

func (s *scanner) regions() []Region {
	return memoized(s, &s.d.regionTexts, s.readRegions)
}

func (s *scanner) readRegions() []Region {
	out := s.d.regions[:0]
	s.array(func() {
		var r Region
		var seen uint64
		s.object(func(key []byte) {
			switch string(key) {
			case "addr":
				if s.once(&seen, 0) {
					r.Addr = s.u64()
				}
			case "bytes":
				if s.once(&seen, 1) {
					r.Bytes = s.u64()
				}
			default:
				s.fail()
			}
		})
		out = append(out, r)
	})
	s.d.regions = out
	if !s.ok {
		return nil
	}
	return shared(&s.d.regionSets, out)
}

func (s *scanner) runs() []Run {
	out := s.d.runs[:0]
	s.array(func() {
		var r Run
		var seen uint64
		s.object(func(key []byte) {
			switch string(key) {
			case "value":
				if s.once(&seen, 0) {
					r.Value = s.i64(64)
				}
			case "count":
				if s.once(&seen, 1) {
					r.Count = s.u64()
				}
			default:
				s.fail()
			}
		})
		out = append(out, r)
	})
	s.d.runs = out
	if !s.ok {
		return nil
	}
	return shared(&s.d.runSets, out)
}

// event reads the object of an event line. The pointer fields share the
// small values' pointers (U64, I64), as the recorder's events do.
//
// Its keys are read by prediction: the keys of a writer's lines come in a
// fixed order (appendEvent), and lines of a type repeat their keys line
// after line, so the key that followed this one on the last line of this
// type is most likely the next; when the line has it at the cursor, byte
// for byte with its quotes and colon, it is taken in one compare, without
// reading it as a string and looking it up. When not, the key is read and
// looked up (fieldIndex), whatever the order, and the prediction learns it.
func (s *scanner) event(e *Event) {
	s.ok = true
	if !s.byte('{') {
		return
	}
	if s.peek() == '}' {
		s.i++
		return
	}
	d := s.d
	var seen uint64
	row := &d.next[nameSlots] // before the type: a row of its own
	prev := len(eventFields)  // before the first key
	for {
		k := int(row[prev])
		if k < len(eventFields) && s.at(&eventFields[k]) {
			s.i += len(eventFields[k].lit)
		} else {
			key := s.raw()
			if !s.byte(':') {
				return
			}
			f, known := fieldIndex[string(key)]
			if !known {
				s.fail() // unknown, or a known key in other case: encoding/json decides
				return
			}
			k = int(f)
			row[prev] = f
		}
		if seen&(1<<k) != 0 { // encoding/json takes the last of duplicate keys, reusing what the first allocated
			s.fail()
			return
		}
		seen |= 1 << k
		if k == typeField {
			// The type is most often the one that followed the last
			// line's type the last time.
			guess := &d.typeAfter[d.lastType]
			if s.quoted(guess.name) {
				e.Type = Type(guess.name)
			} else {
				e.Type = Type(s.name())
				*guess = typeGuess{string(e.Type), s.lastSlot}
			}
			d.lastType = guess.slot
			row = &d.next[guess.slot]
		} else {
			s.field(e, k)
		}
		prev = k
		if i := s.i; i < len(s.b) && s.b[i] == ',' { // the writer's way, tried first
			s.i++
			continue
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.fail()
			return
		}
	}
}

// at reports whether the line has f's key, quoted, and its colon at the
// cursor: one or two word compares for all but the longest keys.
func (s *scanner) at(f *eventField) bool {
	b, i := s.b, s.i
	if len(b)-i < 16 {
		return len(b)-i >= len(f.lit) && string(b[i:i+len(f.lit)]) == f.lit
	}
	w0 := binary.LittleEndian.Uint64(b[i:])
	w1 := binary.LittleEndian.Uint64(b[i+8:])
	if (w0^f.w0)&f.m0|(w1^f.w1)&f.m1 != 0 {
		return false
	}
	return len(f.lit) <= 16 || string(b[i+16:min(len(b), i+len(f.lit))]) == f.lit[16:]
}

// eventField is a key of an event line as a writer puts it, with its quotes
// and colon, and its first sixteen bytes as two words with the masks of the
// bytes they hold.
type eventField struct {
	lit            string
	w0, w1, m0, m1 uint64
}

// eventKeys are Event's keys in the order of its fields, the order a writer
// puts them in; a key's index is its field number for event and field.
var eventKeys = [...]string{"seq", "type", "time", "thread", "agent", "queue", "dispatch", "kernel", "family", "product", "arch", "context", "label", "buffer", "op", "phase", "pass", "total", "corr", "user_data", "call", "result", "status", "payload", "payload_size", "info", "domain", "operations", "op_name", "op_id", "groups", "service", "start", "end", "counters", "signal", "value", "packets", "kernel_packets", "graph", "grid", "workgroup", "args", "addr", "bytes", "mem_kind", "regions", "mem_in", "mem_out", "digest", "elements", "runs", "code", "message"}

// typeField is the index of "type", whose value picks the row of
// predictions for the keys after it.
const typeField = 1

var eventFields = func() (fs [len(eventKeys)]eventField) {
	for k, key := range eventKeys {
		f := &fs[k]
		f.lit = `"` + key + `":`
		var w [16]byte
		n := copy(w[:], f.lit)
		f.w0, f.w1 = binary.LittleEndian.Uint64(w[:]), binary.LittleEndian.Uint64(w[8:])
		for j := range n {
			if j < 8 {
				f.m0 |= 0xff << (8 * j)
			} else {
				f.m1 |= 0xff << (8 * (j - 8))
			}
		}
	}
	return fs
}()

// fieldIndex is the field number of each key.
var fieldIndex = func() map[string]uint8 {
	m := make(map[string]uint8, len(eventKeys))
	for k, key := range eventKeys {
		m[key] = uint8(k)
	}
	return m
}()

// field reads the value of the key of field number k into e.
func (s *scanner) field(e *Event, k int) {
	switch k {
	case 0: // seq
		e.Seq = s.u64()
	case 1: // type
		e.Type = Type(s.nameOf(k))
	case 2: // time
		e.Time = s.u64()
	case 3: // thread
		e.Thread = s.u64()
	case 4: // agent
		e.Agent = s.u64()
	case 5: // queue
		e.Queue = s.u64()
	case 6: // dispatch
		e.Dispatch = s.u64()
	case 7: // kernel
		e.Kernel = s.nameOf(k)
	case 8: // family
		e.Family = Family(s.nameOf(k))
	case 9: // product
		e.Product = s.nameOf(k)
	case 10: // arch
		e.Arch = s.nameOf(k)
	case 11: // context
		e.Context = s.u64()
	case 12: // label
		e.Label = s.nameOf(k)
	case 13: // buffer
		e.Buffer = s.nameOf(k)
	case 14: // op
		e.Op = Op(s.nameOf(k))
	case 15: // phase
		e.Phase = Phase(s.nameOf(k))
	case 16: // pass
		e.Pass = U64(s.u64())
	case 17: // total
		e.Total = U64(s.u64())
	case 18: // corr
		e.Corr = s.corr()
	case 19: // user_data
		e.UserData = U64(s.u64())
	case 20: // call
		e.Call = Call(s.nameOf(k))
	case 21: // result
		e.Result = I64(s.i64(64))
	case 22: // status
		e.Status = Status(s.nameOf(k))
	case 23: // payload
		e.Payload = s.names()
	case 24: // payload_size
		e.PayloadSize = U64(s.u64())
	case 25: // info
		e.Info = s.info()
	case 26: // domain
		e.Domain = Domain(s.nameOf(k))
	case 27: // operations
		var ops []Op // rare: configure calls only
		s.array(func() { ops = append(ops, Op(s.name())) })
		e.Operations = clone(ops)
	case 28: // op_name
		e.OpName = Op(s.nameOf(k))
	case 29: // op_id
		e.OpID = U64(s.u64())
	case 30: // groups
		g := s.d.groups[:0]
		s.array(func() { g = append(g, s.names()) }) // a null group falls back
		s.d.groups = g
		e.Groups = clone(g)
	case 31: // service
		e.Service = Service(s.nameOf(k))
	case 32: // start
		e.Start = s.u64()
	case 33: // end
		e.End = s.u64()
	case 34: // counters
		e.Counters = s.counters()
	case 35: // signal
		e.Signal = s.u64()
	case 36: // value
		e.Value = I64(s.i64(64))
	case 37: // packets
		e.Packets = int(s.i64(strconv.IntSize))
	case 38: // kernel_packets
		e.KernelPackets = int(s.i64(strconv.IntSize))
	case 39: // graph
		e.Graph = s.boolean()
	case 40: // grid
		d := s.dim3()
		e.Grid = &d
	case 41: // workgroup
		d := s.dim3()
		e.Workgroup = &d
	case 42: // args
		e.Args = s.names()
	case 43: // addr
		e.Addr = s.u64()
	case 44: // bytes
		e.Bytes = s.u64()
	case 45: // mem_kind
		e.MemKind = MemKind(s.nameOf(k))
	case 46: // regions
		e.Regions = s.regions()
	case 47: // mem_in
		e.MemIn = s.nameOf(k) // digests come again: a kernel's output is the next pass's input
	case 48: // mem_out
		e.MemOut = s.nameOf(k)
	case 49: // digest
		e.Digest = s.nameOf(k)
	case 50: // elements
		e.Elements = s.u64()
	case 51: // runs
		e.Runs = s.runs()
	case 52: // code
		e.Code = WarningCode(s.nameOf(k))
	case 53: // message
		e.Message = s.str()
	}
}
