package cuda

import (
	"errors"
	"fmt"
)

// ErrInjected marks a failure that Options planted (MEM-5 specs).
var ErrInjected = errors.New("cuda: planted failure")

// driverError is a non-zero CUresult from a named driver call.
type driverError struct {
	call string
	code uintptr
}

// cuResultNames names the CUresult codes a user is likely to meet; others are
// printed by number (cuGetErrorName would need a driver call from an error path).
var cuResultNames = map[uintptr]string{
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	218: "CUDA_ERROR_INVALID_PTX",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	400: "CUDA_ERROR_INVALID_HANDLE",
	500: "CUDA_ERROR_NOT_FOUND",
	600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	999: "CUDA_ERROR_UNKNOWN",
}

const cudaErrorOutOfMemory = 2

func (e *driverError) Error() string {
	name, ok := cuResultNames[e.code]
	if !ok {
		name = "CUresult"
	}
	return fmt.Sprintf("cuda: %s: %s (%d)", e.call, name, e.code)
}

func isOutOfMemory(err error) bool {
	de, ok := err.(*driverError)
	return ok && de.code == cudaErrorOutOfMemory
}
