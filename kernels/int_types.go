package kernels

// int8, int16 and uint32 (issue 30 item 7) have typed kernels where their
// arithmetic or order differs from every other type's; where an operation
// only moves bits, or asks only whether an element is zero, they run on
// the kernels of a type of their size, so that the three types add few
// kernels to the embedded PTX.

// narrowInts are the integer types that share other types' kernels for
// data movement.
var narrowInts = setOf(Int8, Int16, Uint32)

// moveAs is the type whose kernels move dt's elements (fill, strided copy,
// transpose, concat, take, scatter): one of the same size whose kernels
// copy the bits as they are. bool moves as uint8.
func moveAs(dt DType) DType {
	switch dt {
	case Int8, Bool:
		return Uint8
	case Int16:
		return Float16 // half_ops.cuh moves the 16-bit patterns as they are
	case Uint32:
		return Int32
	}
	return dt
}

// addAs is the type whose kernels add dt's elements with the same bits
// (two's complement addition does not depend on the sign): ScatterAdd's
// int8 runs on uint8's kernel, uint32 on int32's; int16 has its own. Eye
// writes the same bits for 0 and 1 as well.
func addAs(dt DType) DType {
	switch dt {
	case Int8:
		return Uint8
	case Uint32:
		return Int32
	}
	return dt
}

// launchAs is launch with the kernel of type dt (moveAs's or addAs's)
// rather than t's own.
func (t *target) launchAs(dt DType, k kop, grid uint32, args ...any) error {
	return t.launchID(kernelID(k, dt, 0), grid, threads, args...)
}

// indexAs is the type whose kernel runs index operation k on t's type.
func indexAs(k kop, dt DType) DType {
	if k == kScatterAdd {
		return addAs(dt)
	}
	return moveAs(dt)
}
