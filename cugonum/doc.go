// Package cugonum moves matrices and vectors between gonum and cuarray:
// a mat.Dense, a mat.VecDense, or a blas64/blas32 General with its rows
// and stride, uploaded into a new cuarray array and downloaded back into
// gonum's storage. It is the Go counterpart of CUDA.jl's cu and Adapt.jl's
// adapt: Go numeric code keeps its gonum types on the host and moves the
// heavy work to the GPU.
//
//	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
//	a, err := cugonum.FromDense[float64](nil, m) // float64[2 3], exact
//	...                                          // work on a with cuarray
//	err = cugonum.ToDense(m, a)                  // back into m's storage
//
// The element type is the caller's explicit choice, as CUDA.jl's cu (which
// turns Float64 into Float32) makes it implicitly: FromDense[float64] copies
// the values exactly, FromDense[float32] rounds each to the nearest float32
// on the host before the upload (half the bytes to move and store, and
// float32's speed on the GPU), and ToDense of a float32 array widens each
// element exactly. gonum's matrices are float64 throughout; blas32.General
// is float32 and goes up and down as is.
//
// A stride larger than the row (a view of a larger matrix, from Slice) is
// packed on the host into a contiguous buffer before the upload, and
// scattered back into the rows on the download; a contiguous matrix of the
// same element type goes up and down with no host copy at all. The arrays
// are row-major, as gonum's matrices are, so element (i, j) is the same on
// both sides.
//
// Every function takes the stream to use: nil means the default streams,
// as cuarray's package-level functions use (device 0 for new arrays, each
// array's own device for downloads). A download waits for the work queued
// on the array, as cuarray's ToSlice does.
package cugonum
