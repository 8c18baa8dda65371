package cuda

// ModulePTX is the kernel library as PTX text, the module the CUDA target
// loads: the C port's CUDA runtime loads the same kernels
// (ports/c/gen/ptxgen.go writes them into a C header).
func ModulePTX() string {
	b := modulePTX()
	return string(b[:len(b)-1]) // without the NUL the driver wants
}
