package trace

import (
	"strings"
	"testing"
)

// A counter value is what was counted: NaN (as a Python driver's json.dumps
// writes it), an infinity, a negative, a fraction or a string is refused
// with a message that says so, never read as 0 (issue 20).
func TestCounterValueIsACount(t *testing.T) {
	head := `{"trace":"` + Version + `","digest":"xxh3-64","spec":"s","target":"exec","sources":["tool"]}` + "\n"
	rec := func(v string) string {
		return head + `{"seq":1,"type":"record","service":"counter_collection","dispatch":1,"counters":[{"name":"SQ_WAVES","value":` + v + `}]}` + "\n"
	}
	for _, c := range []struct{ value, want string }{
		{"NaN", "a value is NaN, which is neither JSON nor a count"},
		{"-Infinity", "a value is Infinity, which is neither JSON nor a count"},
		{"-1", "a counter value is a number -1: counter values are unsigned integers"},
		{"2.5", "a counter value is a number 2.5"},
		{`"nan"`, "a counter value is a string"},
	} {
		_, err := Read(strings.NewReader(rec(c.value)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "line 2: ") {
			t.Errorf("value %s: %v, want %q", c.value, err, c.want)
		}
	}
	if _, err := Read(strings.NewReader(rec("7"))); err != nil {
		t.Errorf("a count: %v", err)
	}
	// A label that merely spells NaN is no value.
	if _, err := Read(strings.NewReader(head + `{"seq":1,"type":"api","label":"NaN"}` + "\n")); err != nil {
		t.Errorf("a label NaN: %v", err)
	}
}
