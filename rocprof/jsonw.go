package rocprof

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// A small JSON tree and a writer that lays it out as rocprofv3's writer
// does: cereal's JSON archive over rapidjson's PrettyWriter. Keys keep
// their order, every member and element starts a new line indented by
// depth times the indent width (0 for results.json, generateJSON.cpp
// open_json; 2 for config.json, tool.cpp generate_config_output), ": "
// after a key, empty containers as {} and [], doubles as rapidjson writes
// them (jsonDouble), strings escaped as rapidjson escapes them (quote,
// backslash and control characters only), no newline after the root.

type (
	jobj []jkv // an object, members in order
	jkv  struct {
		K string
		V any
	}
	jarr  []any   // an array
	jdbl  float64 // a double (integers are uint64, int64 or int)
	jnull struct{}
)

func (o jobj) with(k string, v any) jobj { return append(o, jkv{k, v}) }

func handle(h uint64) jobj { return jobj{{"handle", h}} }

func dim3(x, y, z uint32) jobj { return jobj{{"x", uint64(x)}, {"y", uint64(y)}, {"z", uint64(z)}} }

// marshalJSON writes v with the given indent width.
func marshalJSON(v any, indent int) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, 0, indent)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any, depth, indent int) {
	newline := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", d*indent))
	}
	switch t := v.(type) {
	case jobj:
		if len(t) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			writeString(b, m.K)
			b.WriteString(": ")
			writeJSON(b, m.V, depth+1, indent)
		}
		newline(depth)
		b.WriteByte('}')
	case jarr:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			writeJSON(b, e, depth+1, indent)
		}
		newline(depth)
		b.WriteByte(']')
	case string:
		writeString(b, t)
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case uint64:
		b.WriteString(strconv.FormatUint(t, 10))
	case uint32:
		b.WriteString(strconv.FormatUint(uint64(t), 10))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case int:
		b.WriteString(strconv.Itoa(t))
	case jdbl:
		b.WriteString(jsonDouble(float64(t)))
	case jnull, nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("rocprof: no JSON form for %T", v))
	}
}

// writeString escapes as rapidjson's Writer does by default.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

func strs(ss []string) jarr {
	out := make(jarr, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
