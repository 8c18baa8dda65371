//go:build linux || darwin || freebsd || netbsd

package cuda

import "github.com/ebitengine/purego"

type dlLibrary uintptr

func (l dlLibrary) Sym(name string) (uintptr, error) { return purego.Dlsym(uintptr(l), name) }

// dlopen loads a library with RTLD_NOW so that a broken driver fails here,
// not at the first call; RTLD_GLOBAL as libcuda expects of its loaders.
func dlopen(name string) (library, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, err
	}
	return dlLibrary(h), nil
}
