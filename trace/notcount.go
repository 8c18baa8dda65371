package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
)

// nonFinite finds the tokens some JSON writers put for NaN and infinities
// (Python's json.dumps writes NaN, Infinity and -Infinity by default), as a
// value: after a colon, a comma or an opening bracket.
var nonFinite = regexp.MustCompile(`[:,\[]\s*-?(NaN|nan|Infinity|inf)\b`)

// explainValue says, for a line that did not decode, when the reason is a
// value that is no count: NaN or an infinity (which JSON cannot carry), or
// a counter value that is not an unsigned integer. NaN is never read as 0:
// a counter that was not collected must not be reported as one that was
// (docs/trace.md, "Counter values"). Other errors are returned as they are.
func explainValue(line []byte, err error) error {
	if m := nonFinite.FindSubmatch(line); m != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("a value is %s, which is neither JSON nor a count: a counter the port did not collect must be left out of its record (or the run failed with its reason), never written as a number: %w", m[1], err)
		}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field == "counters.value" {
		return fmt.Errorf("a counter value is a %s: counter values are unsigned integers, what was counted (NaN, negative or fractional values and strings are refused, never read as 0): %w", typ.Value, err)
	}
	return err
}
