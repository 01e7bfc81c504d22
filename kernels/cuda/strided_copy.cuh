// strided_copy.cuh: strided copies, the kernels behind cuarray's views
// (kernels/copy_strided.go), included at the end of kernels.cu.
//
// dst[Σ i_k·ds_k] = src[Σ i_k·ss_k] over a shape. The Go side simplifies the
// layout first (dimensions of 1 dropped, dimensions ordered by dst's strides,
// neighbours contiguous in both merged) and picks a kernel:
//   gocuda_transpose_<t>: a batched transposition, batch × rows × cols,
//     src contiguous along rows and dst along cols, through square tiles in
//     shared memory (TR_S(T) elements a side: 64, or 32 for 16-byte
//     elements), a block a tile. The block's 8 warps read the tile along
//     src's rows (a warp's access is 32 consecutive elements, 128 bytes for
//     float32), every load of a thread first (TR_S²/256 elements: 16 for a
//     64-tile, 64 bytes in flight a thread for float32, 16 KiB a block),
//     then write it along dst's rows the same way. A tile row is padded
//     (TR_P(T) elements) so that its stride in 4-byte words is odd: the
//     column reads of the write phase hit distinct banks for every element
//     size. A tile wholly inside the array moves without bounds checks.
//     (A register-transposing path without shared memory ran at 0.57 of
//     copy's bandwidth on an H100, below 32×32 tiles' 0.75: it wrote only
//     64 contiguous bytes a row and kept 64 bytes in flight a thread.)
//   gocuda_copy_strided_<t>: any layout of up to STRIDED_DIMS dimensions,
//     right-aligned as the strided binary kernels take them (Go launches a
//     layout of more once for each index of the outer ones).
// Elements move as unsigned integers of their size, so one kernel serves
// every type of that size: f32 and i32 as 4 bytes, f64, i64 and c64 as 8.
// The templates take any element of 1, 2, 4, 8 or 16 bytes (the emulator
// checks each). Offsets and lengths are 64-bit.

// The tile's side and row padding for an element of T (see above).
#define TR_S(T) ((int)sizeof(T) <= 8 ? 64 : 32)
#define TR_P(T) ((int)sizeof(T) < 4 ? 4 / (int)sizeof(T) : 1)

// transpose_tiles moves the tiles of the grid's blocks, grid-strided over
// batch × tilesR × tilesC tiles (dst's columns fastest, so that neighbouring
// blocks write neighbouring spans of dst). tile has TR_S rows of TR_S + TR_P
// elements. Every thread of a block runs the same tiles: the barriers are
// reached by all of them.
template <class T>
__device__ __forceinline__ void transpose_tiles(T* tile, T* dst, const T* src, i64 batch, i64 rows, i64 cols,
                                                i64 dBatch, i64 dRow, i64 sBatch, i64 sCol) {
  constexpr int S = TR_S(T), LD = S + TR_P(T);
  constexpr int WARPS = THREADS / 32, RW = S / 32, CH = S / WARPS;  // a thread: CH tile rows × RW lanes' worth
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const i64 tilesR = (rows + S - 1) / S, tilesC = (cols + S - 1) / S;
  const i64 tiles = batch * tilesR * tilesC;
  for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    const i64 rest = t / tilesC, c0 = (t - rest * tilesC) * S;
    const i64 b = rest / tilesR, r0 = (rest - b * tilesR) * S;
    const T* s = src + b * sBatch + r0 + c0 * sCol;
    T* d = dst + b * dBatch + r0 * dRow + c0;
    const bool full = r0 + S <= rows && c0 + S <= cols;  // the same for the whole block
    // Read: tile row j is src's column c0+j, lane tx its elements r0+tx+32i.
    T v[CH][RW];
    if (full) {
#pragma unroll
      for (int j = 0; j < CH; j++)
#pragma unroll
        for (int i = 0; i < RW; i++) v[j][i] = s[tx + 32 * i + (i64)(ty + WARPS * j) * sCol];
    } else {
#pragma unroll
      for (int j = 0; j < CH; j++)
#pragma unroll
        for (int i = 0; i < RW; i++) {
          const int rr = tx + 32 * i, cc = ty + WARPS * j;
          v[j][i] = r0 + rr < rows && c0 + cc < cols ? s[rr + (i64)cc * sCol] : T();
        }
    }
#pragma unroll
    for (int j = 0; j < CH; j++)
#pragma unroll
      for (int i = 0; i < RW; i++) tile[(ty + WARPS * j) * LD + tx + 32 * i] = v[j][i];
    __syncthreads();
    // Write: dst's row r0+rr (rr = ty+8j) takes tile column rr, lane tx its
    // elements c0+tx+32i (tile rows tx+32i).
#pragma unroll
    for (int j = 0; j < CH; j++)
#pragma unroll
      for (int i = 0; i < RW; i++) v[j][i] = tile[(tx + 32 * i) * LD + ty + WARPS * j];
    if (full) {
#pragma unroll
      for (int j = 0; j < CH; j++)
#pragma unroll
        for (int i = 0; i < RW; i++) d[(i64)(ty + WARPS * j) * dRow + tx + 32 * i] = v[j][i];
    } else {
#pragma unroll
      for (int j = 0; j < CH; j++)
#pragma unroll
        for (int i = 0; i < RW; i++) {
          const int rr = ty + WARPS * j, cc = tx + 32 * i;
          if (r0 + rr < rows && c0 + cc < cols) d[(i64)rr * dRow + cc] = v[j][i];
        }
    }
    __syncthreads();  // the tile is read before the next one overwrites it
  }
}

// transpose_any is the kernel's body: the block's tile in shared memory.
template <class T>
__device__ __forceinline__ void transpose_any(T* dst, const T* src, i64 batch, i64 rows, i64 cols, i64 dBatch, i64 dRow,
                                              i64 sBatch, i64 sCol) {
  __shared__ T tile[TR_S(T) * (TR_S(T) + TR_P(T))];
  transpose_tiles(tile, dst, src, batch, rows, cols, dBatch, dRow, sBatch, sCol);
}

// The general copy: dst and src both walk their strides with a
// StridedCursor (kernels.cu); s.sa are dst's strides, s.sb src's.
template <class T>
__device__ __forceinline__ void copy_strided(T* dst, const T* src, i64 n, const Strides& s) {
  const i64 tid = global_tid(), stride = global_stride();
  if (tid >= n) return;
  StridedCursor p(tid, stride, s);
  for (i64 i = tid; i < n; i += stride) {
    dst[p.oa] = src[p.ob];
    p.step(s);
  }
}

#define COPY_STRIDED(T, S)                                                                                    \
  KERNEL gocuda_copy_strided_##S(T* dst, const T* src, i64 n, STRIDED_PARAMS(d), STRIDED_PARAMS(sa),         \
                                 STRIDED_PARAMS(sb)) {                                                        \
    const Strides s = {STRIDED_VALUES(d), STRIDED_VALUES(sa), STRIDED_VALUES(sb)};                            \
    copy_strided(dst, src, n, s);                                                                             \
  }                                                                                                           \
  KERNEL gocuda_transpose_##S(T* dst, const T* src, i64 batch, i64 rows, i64 cols, i64 dBatch, i64 dRow,     \
                              i64 sBatch, i64 sCol) {                                                         \
    transpose_any(dst, src, batch, rows, cols, dBatch, dRow, sBatch, sCol);                                   \
  }

COPY_STRIDED(unsigned, f32)
COPY_STRIDED(u64, f64)
COPY_STRIDED(unsigned, i32)
COPY_STRIDED(u64, i64)
COPY_STRIDED(u8, u8)
COPY_STRIDED(u64, c64)
COPY_STRIDED(unsigned short, f16)
COPY_STRIDED(unsigned short, bf16)
