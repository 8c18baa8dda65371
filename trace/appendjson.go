package trace

import (
	"strconv"
	"unicode/utf8"
)

// appendEvent appends e as one JSON object, the bytes encoding/json writes
// for it (SetEscapeHTML(false)): keys in the order of Event's fields, the
// omitempty ones left out when empty, no spaces. It writes by hand what
// json.Marshal found by reflection, about a microsecond an event;
// TestAppendEventMatchesJSON and FuzzAppendEvent hold it to encoding/json
// byte for byte.
func appendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = appendStr(b, `,"type":`, string(e.Type)) // never omitted
	b = appendU64(b, `,"time":`, e.Time)
	b = appendU64(b, `,"thread":`, e.Thread)
	b = appendU64(b, `,"agent":`, e.Agent)
	b = appendU64(b, `,"queue":`, e.Queue)
	b = appendU64(b, `,"dispatch":`, e.Dispatch)
	b = appendNonEmpty(b, `,"kernel":`, e.Kernel)
	b = appendNonEmpty(b, `,"family":`, string(e.Family))
	b = appendNonEmpty(b, `,"product":`, e.Product)
	b = appendNonEmpty(b, `,"arch":`, e.Arch)
	b = appendU64(b, `,"context":`, e.Context)
	b = appendNonEmpty(b, `,"label":`, e.Label)
	b = appendNonEmpty(b, `,"buffer":`, e.Buffer)
	b = appendNonEmpty(b, `,"op":`, string(e.Op))
	b = appendNonEmpty(b, `,"phase":`, string(e.Phase))
	b = appendU64Ptr(b, `,"pass":`, e.Pass)
	b = appendU64Ptr(b, `,"total":`, e.Total)
	if c := e.Corr; c != nil {
		b = append(b, `,"corr":{"internal":`...)
		b = strconv.AppendUint(b, c.Internal, 10)
		b = append(b, `,"external":`...)
		b = strconv.AppendUint(b, c.External, 10)
		b = append(b, `,"ancestor":`...)
		b = strconv.AppendUint(b, c.Ancestor, 10)
		b = append(b, '}')
	}
	b = appendU64Ptr(b, `,"user_data":`, e.UserData)
	b = appendNonEmpty(b, `,"call":`, string(e.Call))
	if e.Result != nil {
		b = append(b, `,"result":`...)
		b = strconv.AppendInt(b, *e.Result, 10)
	}
	b = appendNonEmpty(b, `,"status":`, string(e.Status))
	if len(e.Payload) > 0 {
		b = appendStrings(append(b, `,"payload":`...), e.Payload)
	}
	b = appendU64Ptr(b, `,"payload_size":`, e.PayloadSize)
	if in := e.Info; in != nil {
		b = append(b, `,"info":{"size":`...)
		b = strconv.AppendUint(b, in.Size, 10)
		b = append(b, `,"kernel_id":`...)
		b = strconv.AppendUint(b, in.KernelID, 10)
		b = append(b, `,"private_segment_size":`...)
		b = strconv.AppendUint(b, uint64(in.PrivateSegment), 10)
		b = append(b, `,"group_segment_size":`...)
		b = strconv.AppendUint(b, uint64(in.GroupSegment), 10)
		b = appendDim3(append(b, `,"workgroup":`...), &in.Workgroup)
		b = appendDim3(append(b, `,"grid":`...), &in.Grid)
		b = append(b, '}')
	}
	b = appendNonEmpty(b, `,"domain":`, string(e.Domain))
	if len(e.Operations) > 0 {
		b = append(b, `,"operations":[`...)
		for i, op := range e.Operations {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(op))
		}
		b = append(b, ']')
	}
	b = appendNonEmpty(b, `,"op_name":`, string(e.OpName))
	b = appendU64Ptr(b, `,"op_id":`, e.OpID)
	if len(e.Groups) > 0 {
		b = append(b, `,"groups":[`...)
		for i, g := range e.Groups {
			if i > 0 {
				b = append(b, ',')
			}
			if g == nil { // inside a list, nothing omits it
				b = append(b, "null"...)
				continue
			}
			b = appendStrings(b, g)
		}
		b = append(b, ']')
	}
	b = appendNonEmpty(b, `,"service":`, string(e.Service))
	b = appendU64(b, `,"start":`, e.Start)
	b = appendU64(b, `,"end":`, e.End)
	if len(e.Counters) > 0 {
		b = append(b, `,"counters":[`...)
		for i := range e.Counters {
			c := &e.Counters[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendStr(b, `{"name":`, c.Name)
			b = append(b, `,"value":`...)
			b = strconv.AppendUint(b, c.Value, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendU64(b, `,"signal":`, e.Signal)
	if e.Value != nil {
		b = append(b, `,"value":`...)
		b = strconv.AppendInt(b, *e.Value, 10)
	}
	if e.Packets != 0 {
		b = append(b, `,"packets":`...)
		b = strconv.AppendInt(b, int64(e.Packets), 10)
	}
	if e.KernelPackets != 0 {
		b = append(b, `,"kernel_packets":`...)
		b = strconv.AppendInt(b, int64(e.KernelPackets), 10)
	}
	if e.Graph {
		b = append(b, `,"graph":true`...)
	}
	if e.Grid != nil {
		b = appendDim3(append(b, `,"grid":`...), e.Grid)
	}
	if e.Workgroup != nil {
		b = appendDim3(append(b, `,"workgroup":`...), e.Workgroup)
	}
	if len(e.Args) > 0 {
		b = appendStrings(append(b, `,"args":`...), e.Args)
	}
	b = appendU64(b, `,"addr":`, e.Addr)
	b = appendU64(b, `,"bytes":`, e.Bytes)
	b = appendNonEmpty(b, `,"mem_kind":`, string(e.MemKind))
	if len(e.Regions) > 0 {
		b = append(b, `,"regions":[`...)
		for i, r := range e.Regions {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"addr":`...)
			b = strconv.AppendUint(b, r.Addr, 10)
			b = append(b, `,"bytes":`...)
			b = strconv.AppendUint(b, r.Bytes, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendNonEmpty(b, `,"mem_in":`, e.MemIn)
	b = appendNonEmpty(b, `,"mem_out":`, e.MemOut)
	b = appendNonEmpty(b, `,"digest":`, e.Digest)
	b = appendU64(b, `,"elements":`, e.Elements)
	if len(e.Runs) > 0 {
		b = append(b, `,"runs":[`...)
		for i, r := range e.Runs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"value":`...)
			b = strconv.AppendInt(b, r.Value, 10)
			b = append(b, `,"count":`...)
			b = strconv.AppendUint(b, r.Count, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendNonEmpty(b, `,"code":`, string(e.Code))
	b = appendNonEmpty(b, `,"message":`, e.Message)
	return append(b, '}')
}

// appendU64 appends key and v unless v is zero (omitempty).
func appendU64(b []byte, key string, v uint64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendUint(append(b, key...), v, 10)
}

// appendU64Ptr appends key and *p unless p is nil (omitempty).
func appendU64Ptr(b []byte, key string, p *uint64) []byte {
	if p == nil {
		return b
	}
	return strconv.AppendUint(append(b, key...), *p, 10)
}

// appendNonEmpty appends key and s unless s is empty (omitempty).
func appendNonEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

func appendStr(b []byte, key, s string) []byte { return appendString(append(b, key...), s) }

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendDim3(b []byte, d *Dim3) []byte {
	b = append(b, '[')
	b = strconv.AppendUint(b, uint64(d[0]), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(d[1]), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(d[2]), 10)
	return append(b, ']')
}

// appendString quotes s as encoding/json does without HTML escaping: '"'
// and '\' behind a backslash; \b \f \n \r \t by name and the other bytes
// below 0x20 as \u00XX; each byte of invalid UTF-8 as \ufffd; U+2028 and
// U+2029, which JavaScript reads as line ends, as \u2028 and \u2029;
// everything else as it is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for len(s) > 0 {
		// The run of bytes that go as they are.
		n := 0
		for n < len(s) {
			c := s[n]
			if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
				break
			}
			n++
		}
		b = append(b, s[:n]...)
		if s = s[n:]; s == "" {
			break
		}
		c := s[0]
		if c < utf8.RuneSelf {
			b = appendEscape(b, c)
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			b = append(b, s[:size]...)
		}
		s = s[size:]
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendEscape writes the escape of c, an ASCII byte that needs one.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}
