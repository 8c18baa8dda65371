package report

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// Every string from outside (a spec's names, a port's trace header and
// labels, a driver's messages, a results file given to merge) reaches a
// terminal through Clean: Name for a field printed on one line, Clean(s,
// true) for a message that may span lines (each further line is indented
// by the report, so it cannot pass for a line of its own). The text report
// escapes every field of a record before it formats it (escapeFields), so
// that no field is left out, today's or tomorrow's.

// Name makes one field safe to print on one line: a newline cannot start
// a forged PASS line, and no control or bidirectional character can move
// the cursor or reorder what is shown. They are written escaped (\n,
// \u202e).
func Name(s string) string { return Clean(s, false) }

// Clean makes text from outside safe to print on a terminal: control
// characters, Unicode format characters (the bidirectional overrides and
// isolates, zero-width characters, the byte-order mark) and line and
// paragraph separators are written escaped (\x1b, \u202e), so that a
// driver cannot move the cursor, clear the screen, hide a line or show
// text in another order than it is. Newlines and tabs stay when multiline
// is set.
func Clean(s string, multiline bool) string {
	ok := true
	for _, r := range s {
		if unsafeRune(r, multiline) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r, multiline) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune, multiline bool) bool {
	if multiline && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// escapeFields returns a copy of v (a record, a violation, an end line)
// with every string in it, however deep, made safe by Name; a field tagged
// `text:"multiline"` by Clean(s, true).
func escapeFields[T any](v T) T {
	out := escapeValue(reflect.ValueOf(v), false)
	return out.Interface().(T)
}

func escapeValue(v reflect.Value, multiline bool) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		out := reflect.New(v.Type()).Elem()
		out.SetString(Clean(v.String(), multiline))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			out.Field(i).Set(escapeValue(v.Field(i), f.Tag.Get("text") == "multiline"))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(escapeValue(v.Index(i), multiline))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(escapeValue(v.Elem(), multiline))
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			out.SetMapIndex(escapeValue(it.Key(), false), escapeValue(it.Value(), multiline))
		}
		return out
	}
	return v
}
