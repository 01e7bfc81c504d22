// strided_copy.cuh: strided copies, the kernels behind cuarray's views
// (kernels/copy_strided.go), included at the end of kernels.cu.
//
// dst[Σ i_k·ds_k] = src[Σ i_k·ss_k] over a shape. The Go side simplifies the
// layout first (dimensions of 1 dropped, dimensions ordered by dst's strides,
// neighbours contiguous in both merged) and picks a kernel:
//   gocuda_transpose_<t>: a batched transposition, batch × rows × cols, src
//     contiguous along rows and dst along cols; 32×32 tiles through shared
//     memory (a padded row of 33 so that the column reads hit 32 different
//     banks), so that both the reads and the writes of a warp are 32
//     consecutive elements. One block a tile, grid-strided over the tiles.
//   gocuda_copy_strided_<t>: any layout of up to STRIDED_DIMS dimensions,
//     right-aligned as the strided binary kernels take them (Go launches a
//     layout of more once for each index of the outer ones).
// Elements move as unsigned integers of their size, so one kernel serves
// every type of that size: f32 and i32 as 4 bytes, f64, i64 and c64 as 8.
// Offsets and lengths are 64-bit.

#define TILE 32

template <class T>
__device__ __forceinline__ void transpose_tiles(T (*tile)[TILE + 1], T* dst, const T* src, i64 batch, i64 rows, i64 cols,
                                                i64 dBatch, i64 dRow, i64 sBatch, i64 sCol) {
  // THREADS threads as TILE lanes × THREADS/TILE rows of a tile.
  const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
  const i64 tilesR = (rows + TILE - 1) / TILE, tilesC = (cols + TILE - 1) / TILE;
  const i64 tiles = batch * tilesR * tilesC;
  // Every thread of a block runs the same tiles: the barriers are reached
  // by all of them.
  for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    const i64 c0 = (t % tilesC) * TILE, rest = t / tilesC;
    const i64 r0 = (rest % tilesR) * TILE, b = rest / tilesR;
    const T* s = src + b * sBatch;
    T* d = dst + b * dBatch;
    // Read along src's contiguous rows: lane tx reads row r0+tx.
    const i64 r = r0 + tx;
    for (int j = ty; j < TILE; j += THREADS / TILE) {
      const i64 c = c0 + j;
      if (r < rows && c < cols) tile[j][tx] = s[r + c * sCol];
    }
    __syncthreads();
    // Write along dst's contiguous columns: lane tx writes column c0+tx.
    const i64 c = c0 + tx;
    for (int j = ty; j < TILE; j += THREADS / TILE) {
      const i64 rr = r0 + j;
      if (rr < rows && c < cols) d[rr * dRow + c] = tile[tx][j];
    }
    __syncthreads();  // the tile is read before the next one overwrites it
  }
}

// The general copy: as strided_general (kernels.cu), each thread finds its
// first element's coordinates and the grid stride's once, then steps both
// offsets with carries. s.sa are dst's strides, s.sb src's.
template <class T>
__device__ __forceinline__ void copy_strided(T* dst, const T* src, i64 n, const Strides& s) {
  const i64 tid = global_tid(), stride = global_stride();
  if (tid >= n) return;
  i64 c[STRIDED_DIMS], st[STRIDED_DIMS];
  i64 x = tid, y = stride, od = 0, os = 0;
#pragma unroll
  for (int k = STRIDED_DIMS - 1; k > 0; k--) {
    c[k] = x % s.d[k];
    x /= s.d[k];
    st[k] = y % s.d[k];
    y /= s.d[k];
  }
  c[0] = x;
  st[0] = y;
#pragma unroll
  for (int k = 0; k < STRIDED_DIMS; k++) {
    od += c[k] * s.sa[k];
    os += c[k] * s.sb[k];
  }
  for (i64 i = tid; i < n; i += stride) {
    dst[od] = src[os];
    i64 carry = 0;
#pragma unroll
    for (int k = STRIDED_DIMS - 1; k > 0; k--) {
      i64 v = c[k] + st[k] + carry;  // < 2 d[k]: one subtraction wraps it
      carry = v >= s.d[k];
      if (carry) v -= s.d[k];
      const i64 dv = v - c[k];
      od += dv * s.sa[k];
      os += dv * s.sb[k];
      c[k] = v;
    }
    const i64 dv = st[0] + carry;
    od += dv * s.sa[0];
    os += dv * s.sb[0];
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
    __shared__ T tile[TILE][TILE + 1];                                                                        \
    transpose_tiles(tile, dst, src, batch, rows, cols, dBatch, dRow, sBatch, sCol);                           \
  }

COPY_STRIDED(unsigned, f32)
COPY_STRIDED(u64, f64)
COPY_STRIDED(unsigned, i32)
COPY_STRIDED(u64, i64)
COPY_STRIDED(u8, u8)
COPY_STRIDED(u64, c64)
COPY_STRIDED(unsigned short, f16)
COPY_STRIDED(unsigned short, bf16)
