package kernels

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
)

// Construction and indexing: Arange, Linspace and Eye fill an array;
// Concat lays arrays side by side; Take gathers along an axis with an index
// array, Scatter and ScatterAdd write back along one. Like the elementwise
// operations they are queued on the stream and return at once, except the
// index operations when checked (see Take).

// ErrIndex is wrapped by the error of a checked Take, Scatter or ScatterAdd
// that met an index outside [-dim, dim).
var ErrIndex = errors.New("index out of range")

// Arange sets dst[i] = start + i*delta for i < n, computed in T's
// arithmetic as NumPy's arange fills an array: delta is (start+step) -
// start in T, dst[1] is start+step itself, and each element is one
// multiplication and one addition, each rounded (never a fused
// multiply-add). Integers wrap as in Go. For the real types, and float16
// and bfloat16, whose elements are start + i*delta computed in float32
// (delta = second - start) and rounded once, as NumPy fills a float16
// array.
func Arange[T Elem](dev backend.Device, s backend.Stream, dst backend.Ptr, start, step T, n int) error {
	dt := DTypeOf[T]()
	t, err := prepare("Arange", kops[kArange].types, dt, dev, s, n, ptrArg{"dst", dst})
	if err != nil || n == 0 {
		return err
	}
	second, delta := arangeSteps(start, step)
	startBits, secondBits, deltaBits := bitsOf(start), bitsOf(second), bitsOf(delta)
	if halfTypes.has(dt) {
		secondBits, deltaBits = halfArangeSteps(dt, startBits, bitsOf(step))
	}
	if t.cu != nil {
		return t.launch(kArange, 0, plainGrid(n, t.sms), dptr(dst), startBits, secondBits, deltaBits, int64(n))
	}
	return t.enqueue(func() { hostArange(dt, dst, startBits, secondBits, deltaBits, n) })
}

// Linspace sets dst to n values evenly spaced from start to stop (stop
// included when endpoint, else left out), computed in float64 and
// converted to T as NumPy's linspace(start, stop, n, endpoint,
// dtype=T): dst[i] = i*step + start with step = (stop-start)/div (div = n-1
// with endpoint, else n), or (i/div)*(stop-start) + start where step
// underflows to 0, and the last element exactly stop with endpoint.
// Integers truncate toward zero (NumPy's astype); start and stop must then
// be finite and within T's range. For the real types, float16 and bfloat16
// (rounded once from the float64 value).
func Linspace[T Elem](dev backend.Device, s backend.Stream, dst backend.Ptr, start, stop float64, n int, endpoint bool) error {
	dt := DTypeOf[T]()
	t, err := prepare("Linspace", kops[kLinspace].types, dt, dev, s, n, ptrArg{"dst", dst})
	if err != nil || n == 0 {
		return err
	}
	if lo, hi, ok := intRange(dt); ok {
		for _, v := range []float64{start, stop} {
			if math.IsNaN(v) || v < lo || v >= hi {
				return t.errorf("start %g and stop %g must lie within %s's range [%g, %g): %w", start, stop, dt, lo, hi, backend.ErrInvalidValue)
			}
		}
	}
	p := planLinspace(start, stop, n, endpoint)
	if t.cu != nil {
		return t.launch(kLinspace, 0, plainGrid(n, t.sms), dptr(dst), p.start, p.step, p.delta, p.div, p.stop, int64(n),
			boolInt(p.stepZero), boolInt(endpoint))
	}
	return t.enqueue(func() { hostLinspace(dt, dst, &p, n, endpoint) })
}

// linspacePlan is NumPy's linspace arithmetic for n values.
type linspacePlan struct {
	start, step, delta, div, stop float64
	stepZero                      bool
}

func planLinspace(start, stop float64, n int, endpoint bool) linspacePlan {
	div := float64(n)
	if endpoint {
		div = float64(n - 1)
	}
	p := linspacePlan{start: start, stop: stop, delta: stop - start, div: div}
	if div > 0 {
		p.step = p.delta / div
		p.stepZero = p.step == 0
	} else {
		// One value with endpoint: NumPy multiplies i = 0 by delta.
		p.step, p.div = p.delta, 1
	}
	return p
}

// linspaceAt is element i of a linspace, as the kernel computes it. The
// float64 conversions round each product (Go may otherwise fuse a
// multiply and an add).
func (p *linspacePlan) at(i, n int, endpoint bool) float64 {
	if endpoint && n > 1 && i == n-1 {
		return p.stop
	}
	if p.stepZero {
		return float64(float64(float64(i)/p.div)*p.delta) + p.start
	}
	return float64(float64(i)*p.step) + p.start
}

// intRange is the range [lo, hi) of an integer dtype as float64s.
func intRange(dt DType) (lo, hi float64, ok bool) {
	switch dt {
	case Int32:
		return math.MinInt32, 1 << 31, true
	case Int64:
		return math.MinInt64, 1 << 63, true
	case Uint8:
		return 0, 1 << 8, true
	case Int8:
		return math.MinInt8, 1 << 7, true
	case Int16:
		return math.MinInt16, 1 << 15, true
	case Uint32:
		return 0, 1 << 32, true
	}
	return 0, 0, false
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// Eye sets the row-major rows × cols matrix dst to ones on diagonal k (the
// elements whose column minus row is k: 0 the main diagonal, k > 0 above
// it, k < 0 below) and zeros elsewhere; every Elem type but bool.
func Eye[T Elem](dev backend.Device, s backend.Stream, dst backend.Ptr, rows, cols, k int) error {
	dt := DTypeOf[T]()
	if err := checkMatrix("Eye", dt, rows, cols); err != nil {
		return err
	}
	n := rows * cols
	t, err := prepare("Eye", kops[kEye].types|narrowInts, dt, dev, s, n, ptrArg{"dst", dst})
	if err != nil || n == 0 {
		return err
	}
	if t.cu != nil {
		return t.launchAs(addAs(dt), kEye, plainGrid(n, t.sms), dptr(dst), int64(rows), int64(cols), int64(k))
	}
	return t.enqueue(func() { hostEye(dt, dst, rows, cols, k) })
}

// ConcatPart is one input of Concat: a row-major matrix of Concat's rows and
// Cols columns at Src (which may be 0 when Cols is 0).
type ConcatPart struct {
	Src  backend.Ptr
	Cols int
}

// concatSlots is how many inputs one concat kernel launch takes
// (index.cuh's CONCAT_SLOTS).
const concatSlots = 8

// Concat sets the row-major rows × C matrix dst, C the sum of the parts'
// columns, to the parts side by side: part j fills its columns of every
// row, after those of the parts before it. Concatenating arrays along an
// axis is this with rows the product of the dimensions before the axis
// and each part's columns the product of its dimensions from the axis on.
// The parts must not overlap dst. Every Elem type but bool.
//
// On a GPU a dst of one row (concatenation along the outermost axis) is one
// device-to-device copy a part; otherwise one kernel launch copies up to 8
// parts (one launch per 8).
func Concat[T Elem](dev backend.Device, s backend.Stream, dst backend.Ptr, rows int, parts []ConcatPart) error {
	dt := DTypeOf[T]()
	cols := 0
	for j, p := range parts {
		if p.Cols < 0 {
			return opErrorf("Concat", dt, "part %d has %d columns; columns must be ≥ 0: %w", j, p.Cols, backend.ErrInvalidValue)
		}
		if cols > math.MaxInt-p.Cols {
			return opErrorf("Concat", dt, "the parts' columns overflow int: %w", backend.ErrInvalidValue)
		}
		cols += p.Cols
	}
	if err := checkMatrix("Concat", dt, rows, cols); err != nil {
		return err
	}
	n := rows * cols
	t, err := prepare("Concat", kops[kConcat].types|narrowInts, dt, dev, s, n, ptrArg{"dst", dst})
	if err != nil || n == 0 {
		return err
	}
	size := dt.Size()
	var live []ConcatPart // the parts with elements
	for _, p := range parts {
		if p.Cols == 0 {
			continue
		}
		if err := t.checkSpan(ptrArg{"src", p.Src}, uint64(rows)*uint64(p.Cols)*uint64(size)); err != nil {
			return err
		}
		live = append(live, p)
	}
	if t.cu == nil {
		return t.enqueue(func() { hostConcat(dst, rows, cols, live, size) })
	}
	if rows == 1 {
		off := 0
		for _, p := range live {
			if err := t.cu.CopyDtoD(dst+backend.Ptr(off*size), p.Src, uint64(p.Cols*size), t.s); err != nil {
				return t.errorf("%w", err)
			}
			off += p.Cols
		}
		return nil
	}
	var args [4 + 2*concatSlots]any
	c0 := 0
	for len(live) > 0 {
		group := live[:min(len(live), concatSlots)]
		live = live[len(group):]
		w := 0
		for j := range concatSlots {
			p := ConcatPart{}
			if j < len(group) {
				p = group[j]
			}
			args[4+2*j], args[5+2*j] = dptr(p.Src), int64(p.Cols)
			w += p.Cols
		}
		args[0], args[1], args[2], args[3] = dptr(dst+backend.Ptr(c0*size)), int64(rows), int64(cols), int64(w)
		if err := t.launchAs(moveAs(t.dt), kConcat, plainGrid(rows*w, t.sms), args[:]...); err != nil {
			return err
		}
		c0 += w
	}
	return nil
}

// IndexLayout is the shape of an index operation: the indexed array is
// Outer × Dim × Inner (row-major), the gathered one Outer × Indices ×
// Inner, and the index array holds Indices int64s. Indexing a row-major
// array along an axis is this with Outer the product of the dimensions
// before the axis, Dim the axis' own, Inner the product of those after it.
type IndexLayout struct {
	Outer, Dim, Inner, Indices int
}

func (l IndexLayout) String() string {
	return fmt.Sprintf("%d × %d × %d indexed by %d", l.Outer, l.Dim, l.Inner, l.Indices)
}

// Take sets dst[o, j, k] = src[o, idx[j], k] for the layout l: dst is Outer
// × Indices × Inner, src Outer × Dim × Inner, idx Indices int64s. A negative
// index counts from the end once (-1 is Dim-1), as in NumPy. An index
// outside [-Dim, Dim) never reads out of bounds: it reads the nearest row
// (0 or Dim-1) instead, and, when checked, Take waits for the stream to run
// it (as a reduction does) and returns an error wrapping ErrIndex naming
// one such index. Unchecked, Take returns at once and says nothing. dst
// must not overlap src or idx. Every Elem type but bool.
func Take[T Elem](dev backend.Device, s backend.Stream, dst, src, idx backend.Ptr, l IndexLayout, checked bool) error {
	return indexOp("Take", kTake, DTypeOf[T](), dev, s, dst, src, idx, l, checked)
}

// Scatter sets dst[o, idx[j], k] = src[o, j, k] for the layout l: dst is
// Outer × Dim × Inner (updated in place), src Outer × Indices × Inner. With
// an index repeated, one of the values written to that element remains:
// the last on the host backend, any on a GPU. Negative indices count from
// the end once; an index outside [-Dim, Dim) writes nothing, and is
// reported as Take reports it. Every Elem type but bool.
func Scatter[T Elem](dev backend.Device, s backend.Stream, dst, src, idx backend.Ptr, l IndexLayout, checked bool) error {
	return indexOp("Scatter", kScatter, DTypeOf[T](), dev, s, dst, src, idx, l, checked)
}

// ScatterAdd adds src[o, j, k] to dst[o, idx[j], k] for the layout l, as
// Scatter but accumulating: an index repeated adds every value it is given.
// On a GPU the adds are atomic and their order is not fixed, so float sums
// may differ in the last bits from run to run; integer sums (which wrap) are
// exact whatever the order. The host backend adds in index order. Every
// Elem type but bool, float16 and bfloat16 (cuarray.ScatterAdd adds those
// in float32).
func ScatterAdd[T Elem](dev backend.Device, s backend.Stream, dst, src, idx backend.Ptr, l IndexLayout, checked bool) error {
	return indexOp("ScatterAdd", kScatterAdd, DTypeOf[T](), dev, s, dst, src, idx, l, checked)
}

func indexOp(op string, k kop, dt DType, dev backend.Device, s backend.Stream, dst, src, idx backend.Ptr, l IndexLayout, checked bool) error {
	if l.Outer < 0 || l.Dim < 0 || l.Inner < 0 || l.Indices < 0 {
		return opErrorf(op, dt, "layout %v is negative: %w", l, backend.ErrInvalidValue)
	}
	rows, ok := mulOK(l.Outer, l.Inner)
	gathered, ok2 := mulOK(rows, l.Indices)
	indexed, ok3 := mulOK(rows, l.Dim)
	if !ok || !ok2 || !ok3 {
		return opErrorf(op, dt, "layout %v overflows int: %w", l, backend.ErrInvalidValue)
	}
	// dst is the gathered array for Take, the indexed one for the scatters.
	dstN, srcN := gathered, indexed
	if k != kTake {
		dstN, srcN = indexed, gathered
	}
	t, err := prepare(op, kops[k].types|narrowInts, dt, dev, s, dstN, ptrArg{"dst", dst})
	if err != nil || gathered == 0 {
		return err
	}
	if l.Dim == 0 {
		return t.errorf("layout %v: no index is valid for an axis of length 0: %w", l, ErrIndex)
	}
	if srcN > maxBytes/dt.Size() {
		return t.errorf("layout %v is more than any device holds: %w", l, backend.ErrInvalidValue)
	}
	if err := t.checkSpan(ptrArg{"src", src}, uint64(srcN)*uint64(dt.Size())); err != nil {
		return err
	}
	if idx == 0 {
		return t.errorf("pointer idx is nil: %w", backend.ErrInvalidValue)
	}
	if idx%8 != 0 {
		return t.errorf("pointer idx = %#x is not 8-byte aligned, as int64 indices must be: %w", uintptr(idx), backend.ErrInvalidValue)
	}
	t.declare("idx", idx, uint64(l.Indices)*8)
	var bad int64
	if t.cu != nil {
		err = t.gpuIndex(k, dst, src, idx, l, gathered, checked, &bad)
	} else {
		err = t.hostIndexRun(k, dst, src, idx, l, checked, &bad)
	}
	if err != nil || bad == 0 {
		return err
	}
	return t.errorf("index %d is out of range for an axis of length %d (valid: %d to %d): %w", bad, l.Dim, -l.Dim, l.Dim-1, ErrIndex)
}

func mulOK(a, b int) (int, bool) {
	if a != 0 && b > math.MaxInt/a {
		return 0, false
	}
	return a * b, true
}

// gpuIndex launches an index kernel; checked, it zeroes a word of reduction
// scratch for the kernel to record a bad index in, and reads it back.
func (t *target) gpuIndex(k kop, dst, src, idx backend.Ptr, l IndexLayout, n int, checked bool, bad *int64) error {
	grid := plainGrid(n, t.sms)
	args := []any{dptr(dst), dptr(src), dptr(idx), int64(l.Outer), int64(l.Indices), int64(l.Dim), int64(l.Inner), dptr(0)}
	kdt := indexAs(k, t.dt)
	if !checked {
		return t.launchAs(kdt, k, grid, args...)
	}
	sc := scratchFor(t.cu)
	buf, err := sc.get(t.cu)
	if err != nil {
		return t.errorf("scratch memory for the index check: %w", err)
	}
	if err := t.cu.Memset32(buf, 0, 2, t.s); err != nil {
		return t.errorf("clearing the index check: %w", err)
	}
	args[7] = dptr(buf)
	if err := t.launchAs(kdt, k, grid, args...); err != nil {
		return err // buf is dropped: nothing says the stream is done with it
	}
	if err := t.cu.CopyDtoH(unsafe.Pointer(bad), buf, 8, t.s); err != nil {
		return t.errorf("reading the index check: %w", err)
	}
	sc.put(buf)
	return nil
}

// hostIndexRun queues the host form of an index kernel; checked, it waits
// for it, so that bad holds what it recorded.
func (t *target) hostIndexRun(k kop, dst, src, idx backend.Ptr, l IndexLayout, checked bool, bad *int64) error {
	var rec *int64
	if checked {
		rec = bad
	}
	done := make(chan struct{})
	if err := t.enqueue(func() {
		defer close(done)
		hostIndex(k, t.dt, dst, src, idx, l, rec)
	}); err != nil {
		return err
	}
	if checked {
		<-done
	}
	return nil
}

// plainGrid sizes a launch of one element a thread, up to a full wave.
func plainGrid(n, sms int) uint32 {
	return clampGrid((n+threads-1)/threads, sms*blocksPerSM)
}

// arangeSteps is start+step and (start+step)-start, each in T's arithmetic
// (Arange's second element and its delta). bool has no arithmetic: Arange
// refuses it before this, and it gives zeros.
func arangeSteps[T Elem](start, step T) (second, delta T) {
	switch a := any(start).(type) {
	case float32:
		return stepsAs[T](a, any(step).(float32))
	case float64:
		return stepsAs[T](a, any(step).(float64))
	case int32:
		return stepsAs[T](a, any(step).(int32))
	case int64:
		return stepsAs[T](a, any(step).(int64))
	case uint8:
		return stepsAs[T](a, any(step).(uint8))
	case int8:
		return stepsAs[T](a, any(step).(int8))
	case int16:
		return stepsAs[T](a, any(step).(int16))
	case uint32:
		return stepsAs[T](a, any(step).(uint32))
	case complex64:
		return stepsAs[T](a, any(step).(complex64))
	}
	return second, delta
}

func stepsAs[T Elem, N number](start, step N) (T, T) {
	second := start + step
	return any(second).(T), any(second - start).(T)
}
