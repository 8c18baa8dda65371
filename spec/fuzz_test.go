package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse: no input makes the loader panic, and every spec it accepts
// (every case of a matrix) survives the trip to a driver (JSON) and back
// unchanged. Its defaults are valid too.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../specs/*.yaml", "../specs/invalid/*.yaml", "testdata/*/*.yaml"} {
		files, _ := filepath.Glob(glob)
		if testing.Short() {
			// make test (-short, -race): every third file, a spread of
			// each directory; all of them in make test-heavy and make
			// fuzz.
			files = everyNth(files, 3)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := ParseCases("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		for _, s := range cases {
			js, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			back, err := ParseJSON("fuzz.yaml", js)
			if err != nil {
				t.Fatalf("the JSON of an accepted spec is refused: %v\n%s", err, js)
			}
			// A case travels as the plain spec it is.
			if d := cmp.Diff(s, back, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Spec{}, "Case")); d != "" {
				t.Fatalf("JSON round trip changed the spec (-yaml +json):\n%s", d)
			}
			if err := Validate(Defaults(s)); err != nil {
				t.Fatalf("defaults make the spec invalid: %v", err)
			}
		}
	})
}

// everyNth is xs[0], xs[n], xs[2n], ...: a spread of a seed corpus for
// -short.
func everyNth[T any](xs []T, n int) []T {
	var out []T
	for i := 0; i < len(xs); i += n {
		out = append(out, xs[i])
	}
	return out
}
