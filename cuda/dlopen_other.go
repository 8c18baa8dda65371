//go:build !(linux || darwin || freebsd || netbsd)

package cuda

import "errors"

func dlopen(name string) (library, error) {
	return nil, errors.New("dynamic loading is not supported on this platform")
}
