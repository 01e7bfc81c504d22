// int_types_index.cuh: int16's eye and scatter-add, included at the end of
// kernels.cu after index.cuh (whose templates and int16 overloads they
// use). int8 and uint32 run uint8's and int32's kernels for these, and
// every one of the three a same-size type's for take, scatter and concat
// (kernels/int_types.go).

KERNEL gocuda_eye_i16(i16* dst, i64 rows, i64 cols, i64 k) { eye(dst, rows, cols, k); }
KERNEL gocuda_scatteradd_i16(i16* dst, const i16* src, const i64* idx, i64 outer, i64 nidx, i64 dim, i64 inner,
                             i64* bad) {
  scatter_add(dst, src, idx, outer, nidx, dim, inner, bad);
}
