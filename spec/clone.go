package spec

import "reflect"

// Clone returns a copy of s that shares no memory with it: every slice,
// map and pointer is copied, so that a caller may change the copy (a
// budget, a list) without touching a spec someone else holds (the built-in
// library is parsed once and handed out as clones).
func Clone(s Spec) Spec {
	var out Spec
	deepCopy(reflect.ValueOf(&out).Elem(), reflect.ValueOf(s))
	return out
}

// deepCopy sets dst (settable) to a copy of src of the same type.
func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		deepCopy(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			deepCopy(v, it.Value())
			m.SetMapIndex(it.Key(), v) // keys are strings: values, not shared memory
		}
		dst.Set(m)
	case reflect.Struct:
		dst.Set(src) // unexported fields (none today) are copied as they are
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				deepCopy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		v := reflect.New(src.Elem().Type()).Elem()
		deepCopy(v, src.Elem())
		dst.Set(v)
	default:
		dst.Set(src)
	}
}
