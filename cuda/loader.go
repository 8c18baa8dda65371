package cuda

import (
	"fmt"
	"strings"
)

// library is an opened shared library: all Open needs from the dynamic
// loader. Tests substitute a fake.
type library interface {
	Sym(name string) (uintptr, error)
}

// openLibrary opens a shared library by file name.
type openLibrary func(name string) (library, error)

// driverLibraries are tried in order: the versioned soname the driver
// package installs, then the development link some images carry instead.
var driverLibraries = []string{"libcuda.so.1", "libcuda.so"}

// loadDriverLibrary opens the first driver library that loads; the error
// names every file tried and why it failed.
func loadDriverLibrary(open openLibrary) (library, error) {
	var tried []string
	for _, name := range driverLibraries {
		lib, err := open(name)
		if err == nil {
			return lib, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
	}
	return nil, fmt.Errorf("no CUDA driver found: tried %s", strings.Join(tried, ", "))
}
