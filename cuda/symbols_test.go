package cuda

import (
	"errors"
	"strings"
	"testing"
)

// fakeLibrary resolves the names it holds to distinct addresses.
type fakeLibrary map[string]uintptr

func (f fakeLibrary) Sym(name string) (uintptr, error) {
	if a, ok := f[name]; ok {
		return a, nil
	}
	return 0, errors.New("undefined symbol: " + name)
}

// fullLibrary holds the first name of every symbol, or the last when
// legacy is set (an old driver without _v2 entry points).
func fullLibrary(legacy bool) fakeLibrary {
	lib := fakeLibrary{}
	for i, s := range (&driver{}).symbols() {
		name := s.names[0]
		if legacy {
			name = s.names[len(s.names)-1]
		}
		lib[name] = uintptr(0x1000 + i)
	}
	return lib
}

func TestResolvePrefersVersionedNames(t *testing.T) {
	lib := fullLibrary(false)
	lib["cuMemAlloc"] = 0xdead // present too, but _v2 wins
	d, err := resolveDriver(lib)
	if err != nil {
		t.Fatal(err)
	}
	if d.memAlloc != lib["cuMemAlloc_v2"] {
		t.Errorf("memAlloc = %#x, want cuMemAlloc_v2's %#x", d.memAlloc, lib["cuMemAlloc_v2"])
	}
}

func TestResolveFallsBackToPlainNames(t *testing.T) {
	lib := fullLibrary(true)
	d, err := resolveDriver(lib)
	if err != nil {
		t.Fatal(err)
	}
	if d.memAlloc != lib["cuMemAlloc"] || d.memcpyDtoDAsync != lib["cuMemcpyDtoDAsync"] {
		t.Error("plain names not used when _v2 is missing")
	}
	if d.eventElapsedTime != lib["cuEventElapsedTime_v2"] {
		t.Error("cuEventElapsedTime_v2 not used when the plain name is missing")
	}
}

func TestResolveReportsMissingRequiredSymbols(t *testing.T) {
	lib := fullLibrary(false)
	delete(lib, "cuLaunchKernel")
	delete(lib, "cuLaunchHostFunc") // optional: no error for it
	_, err := resolveDriver(lib)
	if err == nil || !strings.HasPrefix(err.Error(), "no CUDA driver found: ") || !strings.Contains(err.Error(), "cuLaunchKernel") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "cuLaunchHostFunc") {
		t.Errorf("optional symbol reported missing: %v", err)
	}
}

func TestOptionalSymbolMayBeAbsent(t *testing.T) {
	lib := fullLibrary(false)
	delete(lib, "cuLaunchHostFunc")
	d, err := resolveDriver(lib)
	if err != nil || d.launchHostFunc != 0 {
		t.Fatalf("d.launchHostFunc = %#x, err = %v", d.launchHostFunc, err)
	}
}

func TestLoadDriverLibraryNamesWhatWasTried(t *testing.T) {
	var tried []string
	_, err := loadDriverLibrary(func(name string) (library, error) {
		tried = append(tried, name)
		return nil, errors.New("cannot open shared object file")
	})
	if err == nil || !strings.HasPrefix(err.Error(), "no CUDA driver found: ") {
		t.Fatalf("err = %v", err)
	}
	for _, n := range []string{"libcuda.so.1", "libcuda.so"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error does not name %s: %v", n, err)
		}
	}
	if len(tried) != 2 || tried[0] != "libcuda.so.1" {
		t.Errorf("tried %v", tried)
	}
}

func TestLoadDriverLibraryTakesFirstThatOpens(t *testing.T) {
	lib, err := loadDriverLibrary(func(name string) (library, error) {
		if name == "libcuda.so" {
			return fakeLibrary{}, nil
		}
		return nil, errors.New("no")
	})
	if err != nil || lib == nil {
		t.Fatalf("lib = %v, err = %v", lib, err)
	}
}
