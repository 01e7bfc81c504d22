// strided_copy.cuh: strided copies, the kernels behind cuarray's views
// (kernels/copy_strided.go), included at the end of kernels.cu.
//
// dst[Σ i_k·ds_k] = src[Σ i_k·ss_k] over a shape. The Go side simplifies the
// layout first (dimensions of 1 dropped, dimensions ordered by dst's strides,
// neighbours contiguous in both merged) and picks a kernel:
//   gocuda_transpose_<t>: a batched transposition, batch × rows × cols, src
//     contiguous along rows and dst along cols. Two paths, chosen once a
//     launch (the same test as Go's transposeVectors):
//     - vectors, when both pointers and every stride allow accesses of
//       TR_V(T) elements (16 bytes, 8 for 1-byte elements): each thread
//       reads TR_U(T) vectors of src (TR_U columns × TR_V rows), transposes
//       them in registers and writes TR_V rows of TR_U elements as vectors.
//       A warp's lanes are 8 along rows × 4 along cols, so that a warp's read
//       of one src column is 8 vectors (128 bytes for 16-byte vectors) and
//       its write of one dst row 4·TR_U elements (64 bytes for float32), whole
//       32-byte sectors either way. No shared memory and no barrier: each
//       warp walks its own tiles.
//     - tiles, for any other layout (a view at an odd offset or with odd
//       strides): 32×32 tiles through shared memory (a padded row of 33 so
//       that the column reads hit 32 different banks), so that both the reads
//       and the writes of a warp are 32 consecutive elements. One block a
//       tile, grid-strided over the tiles.
//   gocuda_copy_strided_<t>: any layout of up to STRIDED_DIMS dimensions,
//     right-aligned as the strided binary kernels take them (Go launches a
//     layout of more once for each index of the outer ones).
// Elements move as unsigned integers of their size, so one kernel serves
// every type of that size: f32 and i32 as 4 bytes, f64, i64 and c64 as 8.
// The templates take any element of 1, 2, 4, 8 or 16 bytes (the emulator
// checks each). Offsets and lengths are 64-bit.

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

// The vector path's shapes: TR_V(T) elements make one access (16 bytes;
// 8 for 1-byte elements, whose 16×16 register block would not fit in
// registers), and a thread moves a block of TR_U(T) columns × TR_V(T) rows
// (at least 4 columns, so that 8- and 16-byte elements keep 4 reads in
// flight a thread).
#define TR_V(T) (16 / (int)sizeof(T) < 8 ? 16 / (int)sizeof(T) : 8)
#define TR_U(T) (TR_V(T) < 4 ? 4 : TR_V(T))

// TrVec is TR_V(T) elements, loaded and stored as one 8- or 16-byte access:
// through an integer of that size, so that small elements are not split
// into pieces (as kernels.cu's vload).
template <class T, int N>
struct alignas(N * sizeof(T)) TrVec {
  T e[N];
};
template <int B>
struct TrRaw;
template <>
struct TrRaw<8> {
  typedef u64 type;
};
template <>
struct TrRaw<16> {
  typedef uint4 type;
};
template <class T, int N>
__device__ __forceinline__ TrVec<T, N> tr_load(const T* p) {
  typedef typename TrRaw<N * sizeof(T)>::type R;
  union {
    R r;
    TrVec<T, N> v;
  } x;
  x.r = *reinterpret_cast<const R*>(p);
  return x.v;
}
template <class T, int N>
__device__ __forceinline__ void tr_store(T* p, const TrVec<T, N>& v) {
  typedef typename TrRaw<N * sizeof(T)>::type R;
  union {
    R r;
    TrVec<T, N> v;
  } x;
  x.v = v;
  *reinterpret_cast<R*>(p) = x.r;
}

// transpose_vectors_ok reports whether every vector access of the vector
// path is aligned: both pointers to the vector's bytes, and every stride a
// multiple of TR_V elements (a block's first row and column are multiples
// of TR_V, and TR_U is one too). kernels/copy_strided.go's transposeVectors
// is the same test, to size the grid.
template <class T>
__device__ __forceinline__ bool transpose_vectors_ok(const T* dst, const T* src, i64 dBatch, i64 dRow, i64 sBatch, i64 sCol) {
  const int v = TR_V(T);
  const u64 bytes = (u64)v * sizeof(T);
  return (u64)dst % bytes == 0 && (u64)src % bytes == 0 && dBatch % v == 0 && dRow % v == 0 && sBatch % v == 0 &&
         sCol % v == 0;
}

// transpose_vectors is the vector path. A warp's tile is 8·TR_V rows ×
// 4·TR_U columns, lane l at rows 8·TR_V·… + (l%8)·TR_V and columns
// (l/8)·TR_U; warps walk the tiles grid-strided, columns (dst's contiguous
// dimension) fastest. A block of the tile's edge that is not whole moves
// element by element.
template <class T>
__device__ __forceinline__ void transpose_vectors(T* dst, const T* src, i64 batch, i64 rows, i64 cols, i64 dBatch,
                                                  i64 dRow, i64 sBatch, i64 sCol) {
  constexpr int V = TR_V(T), U = TR_U(T);
  const int lane = threadIdx.x & 31;
  const int lr = lane & 7, lc = lane >> 3;
  const i64 tilesR = (rows + 8 * V - 1) / (8 * V), tilesC = (cols + 4 * U - 1) / (4 * U);
  const i64 tiles = batch * tilesR * tilesC;
  const i64 warps = global_stride() / 32;
  // Tile numbers below 2^32 (every array of fewer than about 2^38
  // elements) divide in 32 bits.
  const bool narrow = tiles + warps <= 0xffffffffll;
  for (i64 t = global_tid() / 32; t < tiles; t += warps) {
    const i64 rest = div_index(t, tilesC, narrow), tc = t - rest * tilesC;
    const i64 b = div_index(rest, tilesR, narrow), tr = rest - b * tilesR;
    const i64 r = tr * (8 * V) + lr * V, c = tc * (4 * U) + lc * U;
    const T* s = src + b * sBatch;
    T* d = dst + b * dBatch;
    if (r + V <= rows && c + U <= cols) {
      // All U reads first, so that they are in flight together.
      T e[U][V];
#pragma unroll
      for (int k = 0; k < U; k++) {
        const TrVec<T, TR_V(T)> v = tr_load<T, TR_V(T)>(s + r + (c + k) * sCol);
#pragma unroll
        for (int m = 0; m < V; m++) e[k][m] = v.e[m];
      }
#pragma unroll
      for (int m = 0; m < V; m++) {
        T* row = d + (r + m) * dRow + c;
#pragma unroll
        for (int q = 0; q < U / V; q++) {
          TrVec<T, TR_V(T)> w;
#pragma unroll
          for (int j = 0; j < V; j++) w.e[j] = e[q * V + j][m];
          tr_store<T, TR_V(T)>(row + q * V, w);
        }
      }
    } else {
      for (int k = 0; k < U; k++)
        for (int m = 0; m < V; m++)
          if (r + m < rows && c + k < cols) d[(r + m) * dRow + c + k] = s[r + m + (c + k) * sCol];
    }
  }
}

// transpose_any picks the path for a launch; the condition is the same for
// every thread, so the tile path's barriers are reached by all of a block.
template <class T>
__device__ __forceinline__ void transpose_any(T* dst, const T* src, i64 batch, i64 rows, i64 cols, i64 dBatch, i64 dRow,
                                          i64 sBatch, i64 sCol) {
  __shared__ T tile[TILE][TILE + 1];
  if (transpose_vectors_ok(dst, src, dBatch, dRow, sBatch, sCol))
    transpose_vectors(dst, src, batch, rows, cols, dBatch, dRow, sBatch, sCol);
  else
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
