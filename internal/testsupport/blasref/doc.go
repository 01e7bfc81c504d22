// Package blasref is the schoolbook matrix product in float64 on the host:
// the reference that package blas's and cuarray's tests check cuBLAS and
// gonum against. Row-major, with leading dimensions, as blas.Gemm takes
// them.
package blasref
