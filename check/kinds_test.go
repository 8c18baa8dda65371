package check

import (
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// Every type of this version has a evKind of its own, and one it does not
// know has none of theirs: the index files events by evKind.
func TestKindOfEveryType(t *testing.T) {
	seen := map[evKind]trace.Type{}
	for _, ty := range trace.Types() {
		k := evKindOf(ty)
		if k >= ekOther {
			t.Errorf("type %s has no evKind", ty)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("types %s and %s share evKind %d", prev, ty, k)
		}
		seen[k] = ty
	}
	if len(seen) != int(ekOther) {
		t.Errorf("%d evKinds for %d types", ekOther, len(seen))
	}
	for _, ty := range []trace.Type{"", trace.Type("no such type"), trace.Callback + "x"} {
		if k := evKindOf(ty); k != ekOther {
			t.Errorf("unknown type %q has evKind %d", ty, k)
		}
	}
}
