package spec_test

import (
	"reflect"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
)

// TestCloneSharesNothing: a clone of every spec of the library (between
// them they use every part of the format) equals it, and no slice, map or pointer of the clone is the
// original's (a shared one would let one test's change leak into the
// library every other test gets).
func TestCloneSharesNothing(t *testing.T) {
	lib, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range lib {
		c := spec.Clone(s)
		if !reflect.DeepEqual(c, s) {
			t.Fatalf("%s: the clone differs", s.Name)
		}
		shared(t, s.Name, reflect.ValueOf(c), reflect.ValueOf(s))
	}
}

func shared(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		// (Go gives every zero-size value one address: nothing to share.)
		if !a.IsNil() && a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 && (a.Kind() != reflect.Slice || a.Cap() > 0) {
			t.Errorf("%s: shared with the original", path)
		}
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !a.IsNil() {
			shared(t, path, a.Elem(), b.Elem())
		}
	case reflect.Slice:
		for i := range a.Len() {
			shared(t, path+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map:
		for it := a.MapRange(); it.Next(); {
			shared(t, path+"."+it.Key().String(), it.Value(), b.MapIndex(it.Key()))
		}
	case reflect.Struct:
		for i := range a.NumField() {
			shared(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	}
}
