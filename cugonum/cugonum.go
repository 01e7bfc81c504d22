package cugonum

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/gocuda/gocuda/cuarray"
)

// Float is the element types an upload may choose.
type Float interface{ float32 | float64 }

// ErrShape is wrapped by every error about a matrix, vector or array
// whose shape does not fit the call.
var ErrShape = errors.New("shapes do not match")

// FromDense uploads m into a new [rows cols] array of T on s (nil: the
// default stream of device 0). float32 rounds each element to nearest.
func FromDense[T Float](s *cuarray.Stream, m *mat.Dense) (*cuarray.Array[T], error) {
	if m == nil || m.IsEmpty() {
		return nil, fmt.Errorf("cugonum: FromDense: an empty or nil mat.Dense has no shape to upload: %w", ErrShape)
	}
	return upload[T]("FromDense", s, of64(m.RawMatrix()))
}

// ToDense downloads a, a 2-D array, into m: into its storage (any stride)
// when m has a's shape, after m.ReuseAs when m is empty.
func ToDense[T Float](m *mat.Dense, a *cuarray.Array[T]) error {
	if m == nil {
		return fmt.Errorf("cugonum: ToDense: nil mat.Dense: %w", ErrShape)
	}
	sh := a.Shape()
	if len(sh) != 2 {
		return fmt.Errorf("cugonum: ToDense: %s is not 2-D; a mat.Dense takes [rows cols]: %w", a.String(), ErrShape)
	}
	if m.IsEmpty() {
		if sh[0] == 0 || sh[1] == 0 {
			return fmt.Errorf("cugonum: ToDense: %s is empty, and a mat.Dense cannot be: %w", a.String(), ErrShape)
		}
		m.ReuseAs(sh[0], sh[1])
	}
	return download("ToDense", of64(m.RawMatrix()), a)
}

// FromVecDense uploads v into a new 1-D array of T of v.Len() elements.
func FromVecDense[T Float](s *cuarray.Stream, v *mat.VecDense) (*cuarray.Array[T], error) {
	if v == nil || v.IsEmpty() {
		return nil, fmt.Errorf("cugonum: FromVecDense: an empty or nil mat.VecDense has no length to upload: %w", ErrShape)
	}
	rv := v.RawVector()
	a, err := upload[T]("FromVecDense", s, column(rv))
	if err != nil {
		return nil, err
	}
	return a.Reshape(rv.N)
}

// ToVecDense downloads a, a 1-D array, into v: into its storage (any
// increment) when v has a's length, after v.ReuseAsVec when v is empty.
func ToVecDense[T Float](v *mat.VecDense, a *cuarray.Array[T]) error {
	if v == nil {
		return fmt.Errorf("cugonum: ToVecDense: nil mat.VecDense: %w", ErrShape)
	}
	sh := a.Shape()
	if len(sh) != 1 {
		return fmt.Errorf("cugonum: ToVecDense: %s is not 1-D: %w", a.String(), ErrShape)
	}
	if v.IsEmpty() {
		if sh[0] == 0 {
			return fmt.Errorf("cugonum: ToVecDense: %s is empty, and a mat.VecDense cannot be: %w", a.String(), ErrShape)
		}
		v.ReuseAsVec(sh[0])
	}
	if v.Len() != sh[0] {
		return fmt.Errorf("cugonum: ToVecDense: %s into a mat.VecDense of %d: %w", a.String(), v.Len(), ErrShape)
	}
	col, err := a.Reshape(sh[0], 1)
	if err != nil {
		return fmt.Errorf("cugonum: ToVecDense: %w", err)
	}
	return download("ToVecDense", column(v.RawVector()), col)
}

// FromGeneral uploads g (Rows × Cols, rows Stride apart) into a new
// [Rows Cols] array of T. Rows or Cols may be 0.
func FromGeneral[T Float](s *cuarray.Stream, g blas64.General) (*cuarray.Array[T], error) {
	return upload[T]("FromGeneral", s, of64(g))
}

// ToGeneral downloads a, a [Rows Cols] array, into g's storage.
func ToGeneral[T Float](g blas64.General, a *cuarray.Array[T]) error {
	return download("ToGeneral", of64(g), a)
}

// FromGeneral32 uploads g into a new [Rows Cols] float32 array, as is.
func FromGeneral32(s *cuarray.Stream, g blas32.General) (*cuarray.Array[float32], error) {
	return upload[float32]("FromGeneral32", s, of32(g))
}

// ToGeneral32 downloads a, a [Rows Cols] float32 array, into g's storage.
func ToGeneral32(g blas32.General, a *cuarray.Array[float32]) error {
	return download("ToGeneral32", of32(g), a)
}

// matrix is a row-major matrix of either precision in gonum's layout:
// rows of cols elements, stride apart in data.
type matrix[S Float] struct {
	rows, cols, stride int
	data               []S
}

func of64(g blas64.General) matrix[float64] { return matrix[float64]{g.Rows, g.Cols, g.Stride, g.Data} }
func of32(g blas32.General) matrix[float32] { return matrix[float32]{g.Rows, g.Cols, g.Stride, g.Data} }

// column is v as a [N 1] matrix whose rows are Inc apart.
func column(v blas64.Vector) matrix[float64] { return matrix[float64]{v.N, 1, v.Inc, v.Data} }

// check says what is wrong with m's layout, "" when nothing: the same
// rules gonum's own constructors apply.
func (m matrix[S]) check() string {
	rows, cols, stride, n := m.rows, m.cols, m.stride, len(m.data)
	switch {
	case rows < 0 || cols < 0:
		return fmt.Sprintf("a negative dimension (%d×%d)", rows, cols)
	case rows > 0 && cols > 0 && stride < cols:
		return fmt.Sprintf("a stride of %d, shorter than its %d columns", stride, cols)
	case rows > 0 && cols > 0 && n < (rows-1)*stride+cols:
		return fmt.Sprintf("%d elements of data, too few for %d×%d with stride %d (%d needed)", n, rows, cols, stride, (rows-1)*stride+cols)
	}
	return ""
}

// contiguous is m's elements as one []T with no copy, when they already
// are one: T is m's element type and the rows are back to back.
func contiguous[T, S Float](m matrix[S]) ([]T, bool) {
	d, ok := any(m.data).([]T)
	if !ok || (m.stride != m.cols && m.rows > 1) {
		return nil, false
	}
	return d[:m.rows*m.cols], true
}

// upload packs m's rows, converted to T, unless they already are a
// contiguous []T, and uploads them as a [rows cols] array on s.
func upload[T, S Float](op string, s *cuarray.Stream, m matrix[S]) (*cuarray.Array[T], error) {
	if why := m.check(); why != "" {
		return nil, fmt.Errorf("cugonum: %s: %s: %w", op, why, ErrShape)
	}
	host, ok := contiguous[T](m)
	if !ok { // the upload copies host, so it may be m's own memory
		host = make([]T, m.rows*m.cols)
		for i := range m.rows {
			row, out := m.data[i*m.stride:i*m.stride+m.cols], host[i*m.cols:(i+1)*m.cols]
			for j, v := range row {
				out[j] = T(v) // float64 to float32 rounds to nearest even
			}
		}
	}
	a, err := cuarray.On[T](s).FromSlice(host, m.rows, m.cols)
	if err != nil {
		return nil, fmt.Errorf("cugonum: %s: %w", op, err)
	}
	return a, nil
}

// download copies a into m's rows, converting T to m's precision, through
// a packed buffer unless m's rows are a contiguous []T.
func download[T, S Float](op string, m matrix[S], a *cuarray.Array[T]) error {
	if why := m.check(); why != "" {
		return fmt.Errorf("cugonum: %s: %s: %w", op, why, ErrShape)
	}
	if sh := a.Shape(); !slices.Equal(sh, []int{m.rows, m.cols}) {
		return fmt.Errorf("cugonum: %s: %s into a %d×%d matrix: %w", op, a.String(), m.rows, m.cols, ErrShape)
	}
	host, direct := contiguous[T](m)
	if !direct {
		host = make([]T, m.rows*m.cols)
	}
	if err := a.CopyTo(host); err != nil {
		return fmt.Errorf("cugonum: %s: %w", op, err)
	}
	if !direct {
		for i := range m.rows {
			row, in := m.data[i*m.stride:i*m.stride+m.cols], host[i*m.cols:(i+1)*m.cols]
			for j, v := range in {
				row[j] = S(v)
			}
		}
	}
	return nil
}
