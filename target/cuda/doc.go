// Package cudatarget is the target "cuda": the reference engine (replay/) on
// an NVIDIA GPU through the CUDA runtime binding (cuda/). A machine without
// a GPU or driver gets target.Unavailable, never a faked run.
//
// It is public for the same reason as target/sim: every implementation the
// suite judges lives under target/.
package cudatarget
