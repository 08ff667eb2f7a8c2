// Transpose stages for profiler-report.
//
// Every kernel reads a row-major `rows x cols` matrix `in` and writes its transpose, a row-major
// `cols x rows` matrix `out`: out[c * rows + r] = in[r * cols + c]. Only the shared-memory tile
// is ever read column-wise. Any rows x cols works, including sizes that are not multiples of the
// tile: every global access is bounds-checked and every __syncthreads() sits outside the checks.
//
// Launch: block (TILE, BLOCK_ROWS) = (32, 8) threads, grid (ceil(cols / 32), ceil(rows / 32));
// each thread handles TILE / BLOCK_ROWS = 4 rows of its 32x32 tile.
//
// Each stage sits between `// stage: <id>` and `// end stage` markers; the report shows the
// source diff from one stage to the next, so each stage differs from the previous by one idea.

#define TILE 32
#define BLOCK_ROWS 8

// stage: copy
template <typename T>
__global__ void copy_tiled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            out[(size_t)(y + j) * cols + x] = in[(size_t)(y + j) * cols + x];
        }
    }
}
// end stage

// stage: naive
template <typename T>
__global__ void transpose_naive(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    const int x = blockIdx.x * TILE + threadIdx.x;  // column of `in`
    const int y = blockIdx.y * TILE + threadIdx.y;  // row of `in`
#pragma unroll 1
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            // Reads are coalesced; writes stride by `rows` elements across the warp.
            out[(size_t)x * rows + (y + j)] = in[(size_t)(y + j) * cols + x];
        }
    }
}
// end stage

// stage: smem
template <typename T>
__global__ void transpose_smem(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll 1
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;  // column of `out` = row of `in`
    y = blockIdx.x * TILE + threadIdx.y;  // row of `out` = column of `in`
#pragma unroll 1
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage

// stage: padded
template <typename T>
__global__ void transpose_padded(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll 1
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll 1
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage

// stage: unrolled
template <typename T>
__global__ void transpose_unrolled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage

// stage: unrolled_nopad
// A deliberate regression for the threshold gate: the unrolled kernel with its padding removed.
// It is correct but brings the 32-way bank conflicts back. Not part of the staged report.
template <typename T>
__global__ void transpose_unrolled_nopad(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage

// ---------------------------------------------------------------------------------------------
// 16-byte stages. Each thread moves a V x V micro-block (V = 16 / sizeof(T) elements per 16-byte
// chunk): V 16-byte global loads from V consecutive rows, a V x V transpose in registers, V
// 16-byte shared stores into a tile kept in the *output* layout, then 16-byte shared loads and
// 16-byte global stores. Launch: 256 threads (1-D block), grid (ceil(cols / (32 V)),
// ceil(rows / (8 V))). When rows or cols is not a multiple of V, or a chunk runs off the edge,
// that chunk falls back to bounds-checked element accesses.
// ---------------------------------------------------------------------------------------------

// stage: vec_padded
template <typename T>
__global__ void __launch_bounds__(256) transpose_vec_padded(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);   // elements per 16-byte chunk
    constexpr int OUT_CHUNKS = 8;       // 16-byte chunks per row of the output tile
    constexpr int TR = 8 * V;           // input-tile rows = output-tile columns
    constexpr int TC = 32 * V;          // input-tile columns = output-tile rows
    union Chunk { uint4 u; T e[V]; };
    // Padded by one chunk (the vector width), the way [32][33] pads a scalar tile.
    __shared__ uint4 tile[TC][OUT_CHUNKS + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    const bool vec_ok = (cols % V == 0) && (rows % V == 0);
    Chunk in_c[V];
    const int col = c0 + V * lane;
#pragma unroll
    for (int i = 0; i < V; ++i) {
        const int r = r0 + V * warp + i;
        if (vec_ok && r < rows && col < cols) {
            in_c[i].u = *reinterpret_cast<const uint4*>(in + (size_t)r * cols + col);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                in_c[i].e[k] = (r < rows && col + k < cols) ? in[(size_t)r * cols + col + k] : T(0);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
        Chunk o;
#pragma unroll
        for (int i = 0; i < V; ++i) o.e[i] = in_c[i].e[k];
        tile[V * lane + k][warp] = o.u;
    }
    __syncthreads();
    const int ch = threadIdx.x & 7;
#pragma unroll
    for (int p = 0; p < V; ++p) {
        const int orow = (threadIdx.x >> 3) + 32 * p;
        Chunk o;
        o.u = tile[orow][ch];
        const int gr = c0 + orow, gc = r0 + V * ch;
        if (vec_ok && gr < cols && gc < rows) {
            *reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc) = o.u;
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (gr < cols && gc + k < rows) out[(size_t)gr * rows + gc + k] = o.e[k];
            }
        }
    }
}
// end stage

// stage: vec_swizzled
template <typename T>
__global__ void __launch_bounds__(256) transpose_vec_swizzled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int OUT_CHUNKS = 8;
    constexpr int TR = 8 * V;
    constexpr int TC = 32 * V;
    union Chunk { uint4 u; T e[V]; };
    // XOR swizzle instead of padding: chunk c of output-tile row r lives at c ^ ((r / V) & 7), so
    // each group of 8 threads (one 128-byte wavefront of 16-byte accesses) hits 8 distinct
    // 16-byte bank groups on both the store and the load side.
    __shared__ uint4 tile[TC][OUT_CHUNKS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    const bool vec_ok = (cols % V == 0) && (rows % V == 0);
    Chunk in_c[V];
    const int col = c0 + V * lane;
#pragma unroll
    for (int i = 0; i < V; ++i) {
        const int r = r0 + V * warp + i;
        if (vec_ok && r < rows && col < cols) {
            in_c[i].u = *reinterpret_cast<const uint4*>(in + (size_t)r * cols + col);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                in_c[i].e[k] = (r < rows && col + k < cols) ? in[(size_t)r * cols + col + k] : T(0);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
        Chunk o;
#pragma unroll
        for (int i = 0; i < V; ++i) o.e[i] = in_c[i].e[k];
        tile[V * lane + k][warp ^ (lane & 7)] = o.u;
    }
    __syncthreads();
    const int ch = threadIdx.x & 7;
#pragma unroll
    for (int p = 0; p < V; ++p) {
        const int orow = (threadIdx.x >> 3) + 32 * p;
        Chunk o;
        o.u = tile[orow][ch ^ ((orow / V) & 7)];
        const int gr = c0 + orow, gc = r0 + V * ch;
        if (vec_ok && gr < cols && gc < rows) {
            *reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc) = o.u;
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (gr < cols && gc + k < rows) out[(size_t)gr * rows + gc + k] = o.e[k];
            }
        }
    }
}
// end stage

// stage: vec_deep
template <typename T, int DEPTH = 2>
__global__ void __launch_bounds__(256) transpose_vec_deep(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    // Each warp moves DEPTH micro-rows: DEPTH times the bytes in flight per thread, and output
    // rows of 8 * DEPTH chunks (128 * DEPTH bytes). The tile (32 V rows x 8 DEPTH chunks) is
    // dynamic shared memory: 32 KB for float32 at DEPTH 2, 64 KB for float16 (opt-in above 48 KB).
    constexpr int OUT_CHUNKS = 8 * DEPTH;
    constexpr int TR = 8 * V * DEPTH;
    constexpr int TC = 32 * V;
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    uint4 (*tile)[OUT_CHUNKS] = reinterpret_cast<uint4 (*)[OUT_CHUNKS]>(smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    const bool vec_ok = (cols % V == 0) && (rows % V == 0);
    Chunk in_c[DEPTH][V];
    const int col = c0 + V * lane;
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const int r = r0 + V * (warp + 8 * d) + i;
            if (vec_ok && r < rows && col < cols) {
                in_c[d][i].u = *reinterpret_cast<const uint4*>(in + (size_t)r * cols + col);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    in_c[d][i].e[k] = (r < rows && col + k < cols) ? in[(size_t)r * cols + col + k] : T(0);
                }
            }
        }
    }
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            Chunk o;
#pragma unroll
            for (int i = 0; i < V; ++i) o.e[i] = in_c[d][i].e[k];
            tile[V * lane + k][(warp + 8 * d) ^ (lane & 7)] = o.u;
        }
    }
    __syncthreads();
    const int ch = threadIdx.x % OUT_CHUNKS;
#pragma unroll
    for (int p = 0; p < V * DEPTH; ++p) {
        const int orow = threadIdx.x / OUT_CHUNKS + (256 / OUT_CHUNKS) * p;
        Chunk o;
        o.u = tile[orow][ch ^ ((orow / V) & 7)];
        const int gr = c0 + orow, gc = r0 + V * ch;
        if (vec_ok && gr < cols && gc < rows) {
            *reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc) = o.u;
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (gr < cols && gc + k < rows) out[(size_t)gr * rows + gc + k] = o.e[k];
            }
        }
    }
}
// end stage

// stage: vec_colwalk
template <typename T, int DEPTH = 2>
__global__ void __launch_bounds__(256) transpose_vec_colwalk(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    // Each warp moves DEPTH micro-rows: DEPTH times the bytes in flight per thread, and output
    // rows of 8 * DEPTH chunks (128 * DEPTH bytes). The tile (32 V rows x 8 DEPTH chunks) is
    // dynamic shared memory: 32 KB for float32 at DEPTH 2, 64 KB for float16 (opt-in above 48 KB).
    constexpr int OUT_CHUNKS = 8 * DEPTH;
    constexpr int TR = 8 * V * DEPTH;
    constexpr int TC = 32 * V;
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    uint4 (*tile)[OUT_CHUNKS] = reinterpret_cast<uint4 (*)[OUT_CHUNKS]>(smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // blockIdx.x walks down the input (tile rows), so the blocks that run together write
    // neighbouring 256-byte segments of the same output rows instead of scattered ones.
    const int r0 = blockIdx.x * TR, c0 = blockIdx.y * TC;
    const bool vec_ok = (cols % V == 0) && (rows % V == 0);
    Chunk in_c[DEPTH][V];
    const int col = c0 + V * lane;
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const int r = r0 + V * (warp + 8 * d) + i;
            if (vec_ok && r < rows && col < cols) {
                in_c[d][i].u = *reinterpret_cast<const uint4*>(in + (size_t)r * cols + col);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    in_c[d][i].e[k] = (r < rows && col + k < cols) ? in[(size_t)r * cols + col + k] : T(0);
                }
            }
        }
    }
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            Chunk o;
#pragma unroll
            for (int i = 0; i < V; ++i) o.e[i] = in_c[d][i].e[k];
            tile[V * lane + k][(warp + 8 * d) ^ (lane & 7)] = o.u;
        }
    }
    __syncthreads();
    const int ch = threadIdx.x % OUT_CHUNKS;
#pragma unroll
    for (int p = 0; p < V * DEPTH; ++p) {
        const int orow = threadIdx.x / OUT_CHUNKS + (256 / OUT_CHUNKS) * p;
        Chunk o;
        o.u = tile[orow][ch ^ ((orow / V) & 7)];
        const int gr = c0 + orow, gc = r0 + V * ch;
        if (vec_ok && gr < cols && gc < rows) {
            *reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc) = o.u;
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (gr < cols && gc + k < rows) out[(size_t)gr * rows + gc + k] = o.e[k];
            }
        }
    }
}
// end stage

// stage: vec_tuned
template <typename T, int TRC = 16, int TCC = 16, int NT = 256>
__global__ void __launch_bounds__(NT) transpose_vec_tuned(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    // The tile shape is a parameter, set from the block-shape sweep (stages.toml `template`): a tile
    // is TRC x TCC micro-blocks of V x V elements, i.e. TCC 16-byte chunks per input row segment and
    // TRC chunks per output row segment; each of the NT threads moves P micro-blocks.
    constexpr int P = TRC * TCC / NT;
    static_assert(P >= 1 && TRC % 8 == 0 && TCC % 8 == 0 && NT % TCC == 0 && NT % TRC == 0, "tile shape");
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    uint4 (*tile)[TRC] = reinterpret_cast<uint4 (*)[TRC]>(smem);
    // A 1-D grid that walks down the input first, as vec_colwalk's swapped axes do.
    const int tiles_r = (rows + TRC * V - 1) / (TRC * V);
    const int r0 = (blockIdx.x % tiles_r) * TRC * V, c0 = (blockIdx.x / tiles_r) * TCC * V;
    const bool vec_ok = (cols % V == 0) && (rows % V == 0);
    const int ch = threadIdx.x % TCC;
    const int col = c0 + V * ch;
    Chunk in_c[P][V];
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const int rg = threadIdx.x / TCC + (NT / TCC) * p;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const int r = r0 + V * rg + i;
            if (vec_ok && r < rows && col < cols) {
                in_c[p][i].u = *reinterpret_cast<const uint4*>(in + (size_t)r * cols + col);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    in_c[p][i].e[k] = (r < rows && col + k < cols) ? in[(size_t)r * cols + col + k] : T(0);
                }
            }
        }
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const int rg = threadIdx.x / TCC + (NT / TCC) * p;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            Chunk o;
#pragma unroll
            for (int i = 0; i < V; ++i) o.e[i] = in_c[p][i].e[k];
            tile[V * ch + k][rg ^ (ch & 7)] = o.u;
        }
    }
    __syncthreads();
    const int oc = threadIdx.x % TRC;
#pragma unroll
    for (int q = 0; q < P * V; ++q) {
        const int orow = threadIdx.x / TRC + (NT / TRC) * q;
        Chunk o;
        o.u = tile[orow][oc ^ ((orow / V) & 7)];
        const int gr = c0 + orow, gc = r0 + V * oc;
        if (vec_ok && gr < cols && gc < rows) {
            *reinterpret_cast<uint4*>(out + (size_t)gr * rows + gc) = o.u;
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (gr < cols && gc + k < rows) out[(size_t)gr * rows + gc + k] = o.e[k];
            }
        }
    }
}
// end stage

// stage: vec_peeled
// The chunk at element e of a row-major array is 16-byte aligned only when e is a multiple of V
// (the arrays' bases are 16-byte aligned); with rows or cols not a multiple of V, row r starts at
// its own offset m = (r * cols) % V. Every access stays 16 bytes wide: a row segment is read as the
// aligned chunks that cover it, and the V elements of each logical chunk are taken from a chunk
// and its right neighbour (a warp shuffle, then a shift by m elements); the output side does the
// same in reverse and writes aligned chunks, peeling only the head and tail chunk of each output
// row segment, which the neighbouring tile shares (at most three 2-, 4- or 8-byte stores each).
// Input offsets depend on the row only through r % V, so the kernel dispatches once on cols % V
// to a body where they are constants; a warp owns one output row at a time (TRC = 32), so each
// output offset is uniform across the warp and its shift is a uniform branch to a constant one.
template <int BYTES>
__device__ __forceinline__ uint4 shift_bytes(uint4 lo, uint4 hi)
{
    // The 16 bytes that start BYTES (0..15, even) into the 32 bytes lo:hi.
    const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    constexpr int q = BYTES / 4, b = (BYTES % 4) * 8;
    if constexpr (b == 0) return make_uint4(w[q], w[q + 1], w[q + 2], w[q + 3]);
    else return make_uint4(__funnelshift_r(w[q], w[q + 1], b), __funnelshift_r(w[q + 1], w[q + 2], b),
                           __funnelshift_r(w[q + 2], w[q + 3], b), __funnelshift_r(w[q + 3], w[q + 4], b));
}

template <typename T>
__device__ __forceinline__ uint4 shift_elems(uint4 lo, uint4 hi, int m)
{
    // shift_bytes by m elements, m uniform across the warp (a branch, not a select per word).
    constexpr int S = sizeof(T);
    switch (m) {
    case 1: return shift_bytes<(1 * S) % 16>(lo, hi);
    case 2: return shift_bytes<(2 * S) % 16>(lo, hi);
    case 3: return shift_bytes<(3 * S) % 16>(lo, hi);
    case 4: return shift_bytes<(4 * S) % 16>(lo, hi);
    case 5: return shift_bytes<(5 * S) % 16>(lo, hi);
    case 6: return shift_bytes<(6 * S) % 16>(lo, hi);
    case 7: return shift_bytes<(7 * S) % 16>(lo, hi);
    default: return lo;
    }
}

template <int W>
__device__ __forceinline__ uint4 shfl_chunk(uint4 v, int delta)
{
    // delta > 0: from the lane `delta` above (down-shuffle); < 0: from the lane below.
    if (delta > 0) {
        return make_uint4(__shfl_down_sync(0xffffffffu, v.x, delta, W), __shfl_down_sync(0xffffffffu, v.y, delta, W),
                          __shfl_down_sync(0xffffffffu, v.z, delta, W), __shfl_down_sync(0xffffffffu, v.w, delta, W));
    }
    return make_uint4(__shfl_up_sync(0xffffffffu, v.x, -delta, W), __shfl_up_sync(0xffffffffu, v.y, -delta, W),
                      __shfl_up_sync(0xffffffffu, v.z, -delta, W), __shfl_up_sync(0xffffffffu, v.w, -delta, W));
}

__device__ __forceinline__ void cp_async16(uint4* smem, const void* gmem, int src_bytes)
{
    // 16 bytes global -> shared without a register (sm_80+); bytes past src_bytes are zero-filled.
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}

__device__ __forceinline__ void st_global16(void* p, uint4 v)
{
    // One 16-byte store, never split: written as PTX because the compiler otherwise merges the
    // vector store with the masked element stores of the edge branch into element stores.
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}

__device__ __forceinline__ unsigned word_at(uint4 v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

__device__ __forceinline__ void st_global_bytes(char* p, uint4 v, int lo, int hi)
{
    // Bytes [lo, hi) of the 16-byte chunk v to the aligned chunk at p (lo == 0 or hi == 16, both
    // even): at most three naturally aligned 2-, 4- and 8-byte stores instead of one per element.
    int pos = lo;
    if ((pos & 2) && pos + 2 <= hi) {
        *reinterpret_cast<unsigned short*>(p + pos) = (unsigned short)(word_at(v, pos >> 2) >> 16);
        pos += 2;
    }
    if ((pos & 4) && pos + 4 <= hi) {
        *reinterpret_cast<unsigned*>(p + pos) = word_at(v, pos >> 2);
        pos += 4;
    }
    if ((pos & 8) && pos + 8 <= hi) {
        *reinterpret_cast<uint2*>(p + pos) = make_uint2(v.z, v.w);
        pos += 8;
    }
    if (pos + 8 <= hi) {
        *reinterpret_cast<uint2*>(p + pos) = make_uint2(v.x, v.y);
        pos += 8;
    }
    if (pos + 4 <= hi) {
        *reinterpret_cast<unsigned*>(p + pos) = word_at(v, pos >> 2);
        pos += 4;
    }
    if (pos + 2 <= hi) *reinterpret_cast<unsigned short*>(p + pos) = (unsigned short)word_at(v, pos >> 2);
}

template <typename T, int TRC, int TCC, int NT, int CM>
__device__ __forceinline__ void peeled_tile(const T* __restrict__ in, T* __restrict__ out, int rows, int cols,
                                            uint4 (*tile)[TRC], uint4* extra)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int P = TRC * TCC / NT;
    union Chunk { uint4 u; T e[V]; };
    const int tiles_r = (rows + TRC * V - 1) / (TRC * V);
    const int r0 = (blockIdx.x % tiles_r) * TRC * V, c0 = (blockIdx.x / tiles_r) * TCC * V;
    const long long n = (long long)rows * cols;
    const int ch = threadIdx.x % TCC;
    const int seg = min(TCC * V, cols - c0);  // elements of each row segment inside the matrix
    // Phase 1, every load in flight at once: for each row the aligned chunk that starts at or
    // before this lane's logical chunk, and for the row's last lane the chunk after it (cp.async:
    // no register while in flight). Row r = r0 + V * rg + i has offset m = (i * CM) % V.
    uint4 lo[P][V];
    bool part = false;  // a chunk that runs past the array's end: loaded element by element below
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const int rg = threadIdx.x / TCC + (NT / TCC) * p;
        const long long row0 = (long long)(r0 + V * rg) * cols + c0;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const int m = (i * CM) % V;
            const int r = r0 + V * rg + i;
            const long long e0 = row0 + (long long)i * cols, a = e0 - m + V * ch;
            // Only the matrix's last row can run past its end (32-bit: a - e0 = V * ch - m).
            const bool need = r < rows && V * ch - m < seg;
            const bool full = need && (r + 1 < rows || V * ch - m + V <= cols - c0);
            lo[p][i] = full ? *reinterpret_cast<const uint4*>(in + a) : make_uint4(0u, 0u, 0u, 0u);
            part |= need && !full;
            if (m != 0 && ch == TCC - 1) {
                int left = 0;
                if (r < rows && V * ch - m + V < seg) {
                    const long long rem = n - (a + V);
                    left = rem >= V ? V : (int)rem;
                }
                cp_async16(&extra[V * rg + i], left > 0 ? in + a + V : in, left * (int)sizeof(T));
            }
        }
    }
    asm volatile("cp.async.commit_group;\n" ::);
    if (part) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const int rg = threadIdx.x / TCC + (NT / TCC) * p;
#pragma unroll
            for (int i = 0; i < V; ++i) {
                const int r = r0 + V * rg + i, m = (i * CM) % V;
                const long long a = (long long)r * cols + c0 - m + V * ch;
                Chunk l;
                l.u = lo[p][i];
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    if (r < rows && a + k < n) l.e[k] = in[a + k];
                }
                lo[p][i] = l.u;
            }
        }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    // Phase 2: each lane's logical chunk, m elements into its aligned chunk and the next one; then
    // the V x V transpose in registers into the swizzled tile (kept in the output layout).
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const int rg = threadIdx.x / TCC + (NT / TCC) * p;
        Chunk in_c[V];
#pragma unroll
        for (int i = 0; i < V; ++i) {
            in_c[i].u = lo[p][i];
            if ((i * CM) % V != 0) {
                uint4 h = shfl_chunk<TCC>(lo[p][i], 1);
                if (ch == TCC - 1) h = extra[V * rg + i];
                in_c[i].u = shift_elems<T>(lo[p][i], h, (i * CM) % V);
            }
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
            Chunk o;
#pragma unroll
            for (int i = 0; i < V; ++i) o.e[i] = in_c[i].e[k];
            tile[V * ch + k][rg ^ (ch & 7)] = o.u;
        }
    }
    __syncthreads();
    const int oc = threadIdx.x % TRC;
    const int oseg = min(TRC * V, rows - r0);  // elements of each output row segment inside the matrix
    const int rm = rows % V;
#pragma unroll
    for (int q = 0; q < P * V; ++q) {
        const int orow = threadIdx.x / TRC + (NT / TRC) * q;
        const uint4 oq = tile[orow][oc ^ ((orow / V) & 7)];
        const int gr = c0 + orow;
        // Output row gr starts at offset m = (gr * rows) % V, the same for the whole warp: aligned
        // chunk oc holds the last m elements of logical chunk oc - 1, then the first V - m of chunk oc.
        const int m = (orow * rm) % V;
        Chunk w;
        w.u = oq;
        if (m != 0) w.u = shift_elems<T>(shfl_chunk<TRC>(oq, -1), oq, V - m);
        if (gr >= cols) continue;
        const int p0 = V * oc - m;
        T* dst = out + (long long)gr * rows + r0 + p0;
        if (oseg == TRC * V) {
            if (p0 >= 0) st_global16(dst, w.u);
            if (m != 0 && (oc == 0 || oc == TRC - 1)) {
                // The head (first lane) and the tail (last lane: the chunk after its own) hold
                // elements of this tile and of the next one: only this tile's bytes are written.
                const bool head = oc == 0;
                const uint4 t = head ? w.u : shift_elems<T>(oq, make_uint4(0u, 0u, 0u, 0u), V - m);
                const int mb = m * (int)sizeof(T);
                st_global_bytes(reinterpret_cast<char*>(head ? dst : dst + V), t, head ? mb : 0, head ? 16 : mb);
            }
        } else {
            // The last tile of the output rows: element stores, masked by the matrix's edge.
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (p0 + k >= 0 && p0 + k < oseg) dst[k] = w.e[k];
            }
            if (oc == TRC - 1 && m != 0) {
                Chunk t;
                t.u = shift_elems<T>(oq, make_uint4(0u, 0u, 0u, 0u), V - m);
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    if (k < m && p0 + V + k < oseg) dst[V + k] = t.e[k];
                }
            }
        }
    }
}

template <typename T, int TRC, int TCC, int NT>
__device__ __forceinline__ void transpose_elements(const T* __restrict__ in, T* __restrict__ out, int rows, int cols,
                                                   int tile)
{
    // Bases not 16-byte aligned (a view into another array): the tile element by element.
    constexpr int V = 16 / sizeof(T);
    const int tiles_r = (rows + TRC * V - 1) / (TRC * V);
    const int r0 = (tile % tiles_r) * TRC * V, c0 = (tile / tiles_r) * TCC * V;
    for (int idx = threadIdx.x; idx < TRC * V * TCC * V; idx += NT) {
        const int r = r0 + idx % (TRC * V), c = c0 + idx / (TRC * V);
        if (r < rows && c < cols) out[(long long)c * rows + r] = in[(long long)r * cols + c];
    }
}

// Blocks per SM the register allocation must allow: one micro-block per thread of 4-byte
// elements fits in 40 registers, and the extra resident blocks keep more loads in flight.
template <typename T, int TRC, int TCC, int NT>
constexpr int peeled_min_blocks() { return sizeof(T) == 4 && TRC * TCC == NT ? 1536 / NT : 1; }

template <typename T, int TRC = 32, int TCC = 16, int NT = 512>
__global__ void __launch_bounds__(NT, (peeled_min_blocks<T, TRC, TCC, NT>())) transpose_vec_peeled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    static_assert(TRC * TCC / NT >= 1 && TRC == 32 && TCC % 8 == 0 && TCC <= 32 && NT % TCC == 0 &&
                  (TRC * TCC) % NT == 0 && (NT / TRC) % V == 0, "tile shape");
    extern __shared__ uint4 smem[];
    uint4 (*tile)[TRC] = reinterpret_cast<uint4 (*)[TRC]>(smem);
    __shared__ uint4 extra[TRC * V];
    if (((reinterpret_cast<size_t>(in) | reinterpret_cast<size_t>(out)) & 15) != 0) {
        transpose_elements<T, TRC, TCC, NT>(in, out, rows, cols, blockIdx.x);
        return;
    }
    switch (cols % V) {
    case 0: peeled_tile<T, TRC, TCC, NT, 0>(in, out, rows, cols, tile, extra); break;
    case 1: peeled_tile<T, TRC, TCC, NT, 1 % V>(in, out, rows, cols, tile, extra); break;
    case 2: peeled_tile<T, TRC, TCC, NT, 2 % V>(in, out, rows, cols, tile, extra); break;
    case 3: peeled_tile<T, TRC, TCC, NT, 3 % V>(in, out, rows, cols, tile, extra); break;
    case 4: peeled_tile<T, TRC, TCC, NT, 4 % V>(in, out, rows, cols, tile, extra); break;
    case 5: peeled_tile<T, TRC, TCC, NT, 5 % V>(in, out, rows, cols, tile, extra); break;
    case 6: peeled_tile<T, TRC, TCC, NT, 6 % V>(in, out, rows, cols, tile, extra); break;
    default: peeled_tile<T, TRC, TCC, NT, 7 % V>(in, out, rows, cols, tile, extra); break;
    }
}
// end stage

// stage: vec_realigned
// vec_peeled realigns in registers and is issue-bound at odd shapes (ncu: 2.3x the instructions of
// its own aligned launch). Here the realignment is an addressing problem instead: the 32-byte
// sectors that cover each input row segment go to shared memory untouched (cp.async, no register),
// and each output chunk is gathered element by element from wherever its V elements landed. Each
// 32-byte output sector is written whole, once, by the tile that holds its first element: the tile
// stages 2V - 1 input rows past its own (a halo) so that its last sector of every output row is
// complete, and no sector is shared with a neighbouring tile.

// The rows-and-cols-odd path (rotated gathers, their swizzle; realigned_rows) where it measured
// faster on the H200 (scripts/experiments/results/README.md, realigned_wide, and two bench sweeps):
// every 2- and 8-byte tile (+1 to +6 % of memcpy) and 4-byte tiles of 32 chunk columns (+6 %).
// 4-byte tiles of 8 or 16 columns ran 1.7-2.4 % slower with it in event timing (ncu timed one
// launch of [32,16,512] the same either way; its bank conflicts fell 6x, but at 92 % of L2
// throughput it is L2-bound), so they go without. Experiments set REALIGNED_ODD to 0 (off
// everywhere) or 2 (on everywhere).
#ifndef REALIGNED_ODD
#define REALIGNED_ODD 1
#endif
template <typename T, int TCC>
__host__ __device__ constexpr bool realigned_odd_path()
{
    return REALIGNED_ODD == 2 || (REALIGNED_ODD == 1 && (sizeof(T) != 4 || TCC == 32));
}

template <unsigned V, bool ODD>
__device__ __forceinline__ unsigned realigned_swizzle(unsigned ri)
{
    // The chunk slot of staged row ri is XORed with this: the V rows one output chunk gathers from
    // are V apart, and without it the lanes' rows would share a bank group (measured without it at
    // 8191x8193: 66 % of memcpy in float32 instead of 89 %). Period 32 rows, the rows between one
    // thread's loads (and between its output chunks). When rows and cols are both odd the gathers
    // are rotated (realigned_rows) and a thread's rows V apart alternate between two chunks: pairs
    // of them share a swizzle value (the CPU bank model: 1.35 wavefronts per gather in float32
    // instead of 4.69, on average over the odd residues; for 2-byte elements this form would have
    // period 64 rows, and the rotation alone gives 2.05 instead of 3.38).
    return ODD && V != 8 ? ((ri / (2 * V)) * 2) & 7 : ((ri / V) * (V == 8 ? 2 : 1)) & 7;
}

template <typename T>
__device__ __forceinline__ uint4 rotate_elems_right(uint4 x, unsigned g)
{
    // Element e of the result is element (e - g) mod V of x (V = 16 / sizeof(T)): whole words by
    // selects, then for 2-byte elements an odd g as a half-word funnel.
    const unsigned words = g * sizeof(T) / 4;
    unsigned w0 = x.x, w1 = x.y, w2 = x.z, w3 = x.w;
    if (words & 1) {
        const unsigned t = w3;
        w3 = w2, w2 = w1, w1 = w0, w0 = t;
    }
    if (words & 2) {
        unsigned t = w0;
        w0 = w2, w2 = t, t = w1, w1 = w3, w3 = t;
    }
    if (sizeof(T) == 2) {
        const unsigned sel = (g & 1) ? 0x5432u : 0x7654u;
        return make_uint4(__byte_perm(w3, w0, sel), __byte_perm(w0, w1, sel), __byte_perm(w1, w2, sel),
                          __byte_perm(w2, w3, sel));
    }
    return make_uint4(w0, w1, w2, w3);
}

__device__ __forceinline__ void cp_async16_full(unsigned smem_addr, const void* gmem, bool prefetch)
{
    // prefetch: the L2 fetches the whole 128-byte line of the chunk on a miss (see realigned_load).
    if (prefetch) asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem));
    else asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem));
}

__device__ __forceinline__ void cp_async16_clamped(unsigned smem_addr, const void* in, long long a_bytes, long long n_bytes,
                                                   bool prefetch)
{
    // The chunk at byte a_bytes of an n_bytes array, zero-filled past its end (the matrix's last row).
    const long long left = n_bytes - a_bytes;
    const int bytes = left >= 16 ? 16 : left > 0 ? (int)left : 0;
    const char* src = static_cast<const char*>(in) + (bytes ? a_bytes : 0);
    if (prefetch) asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(src), "r"(bytes));
    else asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(src), "r"(bytes));
}

#ifndef REALIGNED_SKEW
#define REALIGNED_SKEW 1
#endif
template <typename T>
__device__ __forceinline__ bool realigned_skewed(unsigned rows)
{
    // A float16 warp store writes 64 bytes of each of 8 consecutive output rows. When the output
    // row stride (2 rows bytes) is within 8 bytes of a multiple of 256, those 8 pieces sit at
    // nearly the same offset modulo 256 bytes and the stores run slow: at 8191x8193 the kernel's
    // stores alone (its loads taken out) took 61.4 us against 41.5 us at 8209x8193, where the
    // stride is 34 bytes off (scripts/experiments/results, phases_run1.log). There each row starts
    // at a different 64-byte piece of its segment instead (row g at piece g mod QN): [16,8,256]
    // +4.9-5.0 points of memcpy at 8191x8193, +3.5-3.8 at 4097x8191, +3.4-3.6 at 8449x8193 and
    // +3.7-3.8 at 8192x8192, in the same process (skew_rule_run1.log; ncu at 8191x8193: 78.8 us
    // against 85.0, no local memory). Rows 8177-8209 (skew_threshold_run1.log): it gained 0.7-6.2
    // points at strides 2 and 6 bytes off, was level within 1.0 (once -1.8) at 10 and 14, and lost
    // up to 1.2 at 18-34 (and at 9001x8193, 82 bytes off: phases_run1.log); from 10 bytes
    // off the pieces go in order. Rows of 4- and 8-byte elements (128 bytes or more per row and
    // store) gained at most 0.6 points from it (phases_run1.log, skew_run1.log). Experiments set
    // REALIGNED_SKEW to 0 (never) or 2 (always).
    const unsigned delta = rows * (unsigned)sizeof(T) % 256;
    return REALIGNED_SKEW == 2 || (REALIGNED_SKEW == 1 && sizeof(T) == 2 && (delta <= 8 || delta >= 248));
}
template <typename T, int TCC, bool ODD>
__device__ __forceinline__ unsigned realigned_stage_offset(unsigned ri, unsigned orow, unsigned cm)
{
    // Byte offset in the stage of staged row ri's element for output row orow (input column
    // c0 + orow), cm = cols mod A: the row's segment starts (ri mod A) cm mod A elements into its
    // first chunk; chunk columns past TCC are the row's extra sector (realigned_load's layout).
    constexpr unsigned V = 16 / sizeof(T), A = 2 * V, GROUP = 32 * TCC + 64;
    const unsigned p = ((ri % A) * cm) % A + orow;
    const unsigned jr = p / V;
    const unsigned slot = jr < TCC ? 64 + (ri % 32) * TCC + (jr ^ realigned_swizzle<V, ODD>(ri)) : 2 * (ri % 32) + jr - TCC;
    return ((ri / 32) * GROUP + slot) * 16 + (p % V) * (unsigned)sizeof(T);
}

__device__ __forceinline__ long long realigned_flat(unsigned gr, unsigned rows, unsigned col)
{
    // gr rows + col, by an asm the compiler cannot hoist: computed with the interior path's offsets,
    // gr rows was kept live across that path and spilled there at 40 registers under NVRTC (an
    // 8-byte store per output row: 528,900 local sectors at 8191x8193 float16, 11 % of the L2
    // writes; float32 [16,32,512] 1.1-1.2 % of memcpy slower with it at the odd shapes,
    // f16_tiles_run1.log).
    long long f;
    asm volatile("mad.wide.u32 %0, %1, %2, %3;\n" : "=l"(f) : "r"(gr), "r"(rows), "l"((long long)col));
    return f;
}

template <typename T, int TRC, int TCC, int NT, bool ODD>
__device__ __forceinline__ void realigned_rows(const T* __restrict__ in, T* __restrict__ out, int rows, int cols,
                                               const char* st, unsigned r0, unsigned c0, unsigned orow)
{
    // Phase 2 for one thread's output row: a warp writes V output rows x 32 / V chunks at a time
    // (lane = g + V * jl), the rows differing so the lanes' gathers spread over the banks. Output
    // row gr's first owned sector starts d = -(gr * rows) mod A elements into the tile's segment;
    // its chunk jl + (32 / V) * q covers output columns r0 + d + V * jl + 32 * q + k, i.e. staged
    // rows d + V * jl + 32 * q + k. With rows and cols odd (ODD) every V output rows read the same
    // word of a chunk at once (the word is orow (1 - rows cols) + cols k mod V): lane g gathers its
    // elements starting at k = g instead, and rotates the chunk back before the store.
    constexpr unsigned V = 16 / sizeof(T), A = 2 * V;
    constexpr unsigned RIN = TRC * V + A - 1;
    constexpr unsigned QSTEP = (32 * TCC + 64) * 16;  // bytes between staged rows 32 apart
    constexpr unsigned QN = TRC * V / 32;  // chunks per thread and output row: 32 elements apart
    // 2-byte elements unroll at most 4 chunks, and 2 with the rotation or in tiles of 16 chunk rows
    // (0-0.8 % faster than 4 at the odd float16 shapes).
    constexpr unsigned UNROLL = V == 8 ? (ODD || TRC == 16 ? 2 : 4) : QN;
    union Chunk { uint4 u; T e[V]; };
    const unsigned urows = rows, ucols = cols;
    const unsigned cm = ucols % A, rm = urows % A;
    const unsigned g = threadIdx.x % 32 % V, jl = (threadIdx.x % 32) / V;
    const unsigned gr = c0 + orow;
    const unsigned d = (A - ((gr % A) * rm) % A) % A;
    const unsigned rot = ODD ? g : 0;
    unsigned base[V];  // byte offset in the stage of element (k + rot) mod V of chunk 0
#pragma unroll
    for (unsigned k = 0; k < V; ++k) base[k] = realigned_stage_offset<T, TCC, ODD>(d + V * jl + (k + rot) % V, orow, cm);
    T* const dst = out + (long long)gr * rows + r0 + d + V * jl;
    // The whole chunk q stored (16 bytes, aligned).
    auto store_chunk = [&](unsigned q) {
        Chunk o;
#pragma unroll
        for (unsigned k = 0; k < V; ++k) o.e[k] = *reinterpret_cast<const T*>(st + base[k] + q * QSTEP);
        st_global16(dst + 32 * q, ODD ? rotate_elems_right<T>(o.u, rot) : o.u);
    };
    if (r0 + RIN <= urows) {
        // Every chunk of this thread is inside the matrix and whole in the stage.
        if (realigned_skewed<T>(urows)) {
            // Row g begins at its 32-element piece g mod QN: one warp store's V rows at different offsets.
#pragma unroll UNROLL
            for (unsigned q = 0; q < QN; ++q) store_chunk((q + g) % QN);
        } else {  // a loop of its own, so the chunks in order keep compile-time offsets
#pragma unroll UNROLL
            for (unsigned q = 0; q < QN; ++q) store_chunk(q);
        }
        return;
    }
    // The tile at the bottom of the input owns the chunks up to the next output row's first owned
    // sector (dn elements into it). A chunk that runs past the staged rows takes its elements up to
    // them from the stage and the rest, the next output row's first ones (input rows e, column
    // gr + 1), from the input, all of its loads issued before one 16-byte store. Element by element
    // from the input, each load waited for before its store, float16 4097x8191 ran 4.1-5.8 % of
    // memcpy slower, the other odd shapes 0.2-3.4 % (edge_loads_run1.log; ncu at 4097x8191
    // [16,8,256]: 41.8 against 39.7 us).
    const unsigned seg = urows - r0;
    const unsigned last = r0 + TRC * V >= urows ? seg + (A - (((gr + 1) % A) * rm) % A) % A : d + TRC * V;
    const bool final_row = gr + 1 >= ucols;  // the matrix's last output row: no element past it
    const long long n = (long long)rows * cols;
    // In order: the store skew's order here ran 0.5-5.4 % of memcpy slower at float16 4097x8191 and
    // 8191x8193, level at 12345x6789 and 7919x7907 (prefetch_rule_run1.log).
    for (unsigned q = 0; q < QN; ++q) {
        const unsigned c = d + V * jl + 32 * q;
        if (c >= last) break;
        if (c + V <= seg) {
            store_chunk(q);
            continue;
        }
        if (!final_row && c + V - seg <= urows) {
            // Staged elements, then the next output row's first ones: the loads issued together.
            Chunk o;
#pragma unroll
            for (unsigned k = 0; k < V; ++k) {
                const unsigned ri = c + k;
                T x = *reinterpret_cast<const T*>(st + realigned_stage_offset<T, TCC, ODD>(min(ri, seg - 1), orow, cm));
                if (ri >= seg) x = in[(long long)(ri - seg) * cols + gr + 1];
                o.e[k] = x;
            }
            st_global16(dst + 32 * q, o.u);
            continue;
        }
        // The matrix's last output row, or fewer rows than a sector (output element f + k is then
        // further on than the next row): element by element, up to the matrix's end.
        const long long f = realigned_flat(gr, urows, r0 + c);
        for (unsigned k = 0; k < V && f + k < n; ++k) {
            const unsigned ri = c + k;
            out[f + k] = ri < seg ? *reinterpret_cast<const T*>(st + realigned_stage_offset<T, TCC, ODD>(ri, orow, cm))
                                  : in[((f + k) % rows) * cols + (f + k) / rows];
        }
    }
}

template <unsigned V, unsigned TRC, unsigned TCC>
__host__ __device__ constexpr unsigned realigned_slots()
{
    // 16-byte chunk slots of one staged tile (launch.py's realigned_smem_bytes / 16).
    constexpr unsigned RIN = TRC * V + 2 * V - 1;
    return (RIN - 1) / 32 * (32 * TCC + 64) + 64 + ((RIN - 1) % 32 + 1) * TCC;
}

template <typename T, int TRC, int TCC, int NT, bool ODD>
__device__ __forceinline__ void realigned_load(const T* __restrict__ in, int rows, int cols, unsigned r0, unsigned c0,
                                               unsigned sbase, bool narrow)
{
    // Phase 1, issued and not waited for: staged row ri holds the chunks from the sector at or
    // before element (r0 + ri, c0): row r's segment starts m = (r * cols) % A elements into it.
    // Halo rows are loaded only when output rows start off a sector (rows % A != 0), the extra
    // sector only when m != 0. A thread loads chunk jr of rows ri0, ri0 + RPI, ...: all with its m.
    constexpr unsigned V = 16 / sizeof(T), A = 2 * V;
    constexpr unsigned RIN = TRC * V + A - 1;  // staged input rows: the tile's and the halo
    // Staged rows come in groups of 32: two chunks per row for the sector past a shifted segment,
    // then TCC chunks each (rows 128-byte multiples apart, so a cp.async wavefront fills one shared
    // line). Rows 32 apart are a group apart: one thread's rows. The last group ends at its last row.
    constexpr unsigned GROUP = 32 * TCC + 64;  // chunk slots per 32 staged rows
    constexpr unsigned QSTEP = GROUP * 16;     // bytes between staged rows 32 apart
    constexpr unsigned RPI = NT / TCC;         // rows one load pass covers: 32 or 16
    constexpr unsigned SUB = 32 / RPI;         // load passes per group
    const unsigned urows = rows, ucols = cols;
    const unsigned cm = ucols % A, rm = urows % A;
    const unsigned nr = min(rm ? RIN : TRC * V, urows - r0);
    // Where rows start off a sector (cm != 0) the first and last sector of each row segment are
    // shared with the neighbouring tiles, which read them at other times: the prefetch hint has the
    // L2 fetch the whole 128-byte line at once. Without it the odd shapes ran 0-2.4 % of memcpy
    // slower in every dtype; at aligned shapes it made no difference (within 0.7 %), and 256 bytes
    // was no better (prefetch_rule_run1.log, cache_hints_run1.log, where output stores with
    // st.global.cs or an L2 evict_first policy ran 0.4-4 % slower).
    const bool prefetch = cm != 0;
    // A chunk can run past the array's end only in the last two rows, or when cols is under a tile.
    const bool wide = TCC * V + A <= ucols;
    const long long nbytes = (long long)rows * cols * sizeof(T);
    const unsigned jr = threadIdx.x % TCC, ri0 = threadIdx.x / TCC;
    // A narrow tile (half the columns, realigned_tiles) stages its TCC / 2 chunks and the sector past
    // them in the chunk slots, and no extra sector.
    const bool mine = !narrow || jr < TCC / 2 + (cm ? 2 : 0);
    const unsigned m = ((ri0 % A) * cm) % A;
    const long long a0 = (long long)(r0 + ri0) * cols + c0 - m + V * jr;
    unsigned dsts[SUB];
#pragma unroll
    for (unsigned s = 0; s < SUB; ++s) {
        const unsigned ri = ri0 + RPI * s;  // < 32
        dsts[s] = sbase + (64 + ri * TCC + (jr ^ realigned_swizzle<V, ODD>(ri))) * 16;
    }
#pragma unroll
    for (unsigned it = 0; it < (RIN + RPI - 1) / RPI; ++it) {
        const unsigned ri = ri0 + RPI * it;
        if (ri < nr && mine) {
            const long long a = a0 + (long long)(RPI * it) * cols;
            const unsigned dst = dsts[it % SUB] + (it / SUB) * QSTEP;
            if (wide && r0 + ri + 2 <= urows) cp_async16_full(dst, in + a, prefetch);
            else cp_async16_clamped(dst, in, a * sizeof(T), nbytes, prefetch);
        }
    }
    if (cm && !narrow) {
#pragma unroll
        for (unsigned it = 0; it < (2 * RIN + NT - 1) / NT; ++it) {
            const unsigned ri = (threadIdx.x + NT * it) / 2, half = threadIdx.x % 2;
            const unsigned mx = ((ri % A) * cm) % A;
            if (ri < nr && mx) {
                const long long a = (long long)(r0 + ri) * cols + c0 - mx + V * (TCC + half);
                const unsigned d = sbase + ((ri / 32) * GROUP + 2 * (ri % 32) + half) * 16;
                if (wide && r0 + ri + 2 <= urows) cp_async16_full(d, in + a, prefetch);
                else cp_async16_clamped(d, in, a * sizeof(T), nbytes, prefetch);
            }
        }
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

template <typename T, int TRC, int TCC, int NT, bool ODD>
__device__ __forceinline__ void realigned_drain(const T* __restrict__ in, T* __restrict__ out, int rows, int cols,
                                                unsigned r0, unsigned c0, const uint4* stage, bool narrow)
{
    // Phase 2: each warp's V output rows, once (NT = 32 TCC) or twice (NT = 16 TCC; once in a narrow
    // tile: the first pass's rows are its columns).
    constexpr unsigned V = 16 / sizeof(T);
    const unsigned g = threadIdx.x % 32 % V;
    const unsigned passes = narrow ? 1 : 32 * TCC / NT;
#pragma unroll 1
    for (unsigned h = 0; h < passes; ++h) {
        const unsigned orow = V * (threadIdx.x / 32 + (NT / 32) * h) + g;
        if (c0 + orow >= (unsigned)cols) break;
        realigned_rows<T, TRC, TCC, NT, ODD>(in, out, rows, cols, reinterpret_cast<const char*>(stage), r0, c0, orow);
    }
}

template <typename T, int TRC, int TCC, int NT, int TPB, bool ODD>
__device__ __forceinline__ void realigned_tiles(const T* __restrict__ in, T* __restrict__ out, int rows, int cols,
                                                uint4* smem)
{
    // Block b takes tiles b, b + grid, b + 2 grid, ... (at most TPB). With TPB > 1 there are two
    // stages: the next tile's cp.async copies are in flight while this one is gathered and stored
    // (it measured faster at the largest float64 and float16 shapes only: at the odd ones the
    // second stage costs more in resident blocks than it hides; scripts/experiments/results).
    constexpr unsigned V = 16 / sizeof(T), SLOTS = realigned_slots<V, TRC, TCC>();
    const unsigned urows = rows, ucols = cols;
    const unsigned tiles_r = (urows + TRC * V - 1) / (TRC * V);
    const unsigned ntiles = tiles_r * ((ucols + TCC * V - 1) / (TCC * V));
    const unsigned sbase = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    unsigned t = blockIdx.x;
    auto origin = [&](unsigned tile, unsigned& r0, unsigned& c0) {
        r0 = (tile % tiles_r) * TRC * V, c0 = (tile / tiles_r) * TCC * V;
    };
    // A grid of ntiles + S blocks (S <= ntiles; one tile a block) splits the last S tiles into two
    // narrow ones each, the left and right half of its columns, so that the last wave runs half as
    // long: the host sets S to the last wave's remainder where that is at most half a wave
    // (launch.py's realigned_tail_split, from the occupancy API). float16 [16,16,256] gained 0.5-2.4 %
    // of memcpy at the odd shapes (ncu: SMs idle 5-9 % of a launch, the tail), float32 and float64
    // were level (tail_split_run1.log). Only where two output passes make a tile (NT = 16 TCC), so
    // that half the columns is half the work.
    constexpr bool SPLITS = TPB == 1 && NT == 16 * TCC;
    bool narrow = false;
    unsigned right = 0;
    if (SPLITS && gridDim.x > ntiles) {
        if (t >= 2 * ntiles) return;  // blocks past two narrow tiles each
        const unsigned whole = 2 * ntiles - min(gridDim.x, 2 * ntiles);
        narrow = t >= whole;
        if (narrow) right = (t - whole) % 2, t = whole + (t - whole) / 2;
    }
    unsigned r0, c0;
    origin(t, r0, c0);
    c0 += right * (TCC * V / 2);
    if (c0 >= ucols) return;  // the right half of a tile past the last column
    realigned_load<T, TRC, TCC, NT, ODD>(in, rows, cols, r0, c0, sbase, narrow);
    for (unsigned i = 0;; ++i) {
        const unsigned tn = t + gridDim.x, cur = TPB > 1 ? (i & 1) * SLOTS : 0;
        unsigned rn, cn;
        origin(tn, rn, cn);
        if (TPB > 1 && tn < ntiles) realigned_load<T, TRC, TCC, NT, ODD>(in, rows, cols, rn, cn, sbase + (SLOTS - cur) * 16, false);
        if (TPB > 1 && tn < ntiles) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
        else asm volatile("cp.async.wait_all;\n" ::: "memory");
        __syncthreads();
        realigned_drain<T, TRC, TCC, NT, ODD>(in, out, rows, cols, r0, c0, smem + cur, narrow);
        if (TPB == 1 || tn >= ntiles) return;
        __syncthreads();  // this stage is the one the load after next writes
        t = tn, r0 = rn, c0 = cn;
    }
}

template <typename T, int TRC, int TCC, int NT, int TPB>
__host__ __device__ constexpr int realigned_min_blocks()
{
    // 1536 / NT blocks per SM (see below), 1280 / 256 for 2-byte elements in blocks of 256 threads:
    // 5 ran 0.6-3.4 % of memcpy faster than 6 at the odd float16 shapes (1.5 % slower at 8192x8192,
    // where vec_tuned leads; scripts/experiments/results/realigned_regs_run1.log, then at 40
    // registers with a spill under NVRTC; without it, f16_tiles_run1.log: 0.8-1.4 % faster). Never
    // more than their shared memory lets reside (228 KB an SM, 1 KB of it reserved per block; two
    // stages take twice a tile's), so the registers are not cut for blocks that cannot run.
    constexpr int threads = sizeof(T) == 2 && NT == 256 ? 1280 : 1536;
    constexpr int by_smem = 233472 / ((TPB > 1 ? 2 : 1) * 16 * realigned_slots<16 / sizeof(T), TRC, TCC>() + 1024);
    return by_smem >= threads / NT ? threads / NT : by_smem > 0 ? by_smem : 1;
}

template <typename T, int TRC = 32, int TCC = 8, int NT = 256, int TPB = 1>
__global__ void __launch_bounds__(NT, (realigned_min_blocks<T, TRC, TCC, NT, TPB>())) transpose_vec_realigned(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    // 1536 / NT blocks per SM: at most 40 registers (at 512 threads the compiler's own choice, 43 to
    // 64, left 2 blocks resident: 85.7 % of memcpy at 8191x8193 float32 instead of 92.9 %).
    // Alignment is to 32-byte sectors (A = 2V elements), on both sides: every 8-lane cp.async
    // wavefront reads 4 whole sectors, and every warp store writes whole sectors, so L2 moves no
    // partial or twice-read sectors inside a tile (ncu at 8191x8193 float32 with 16-byte alignment:
    // 1.6x the L2 read sectors of 8192x8192 and L2 throughput at 91 %). TRC: chunk rows, 8 to 32,
    // whole 32-element pieces of an output row (TRC V a multiple of 32: float16 20 and 24 run three
    // blocks of 512 threads per SM, f16_tiles_run1.log; float16 [8,16,256] is level with [16,8,256]
    // at the odd shapes, small_tiles_run1.log). TPB: tiles per block (the grid is
    // ceil(tiles / TPB)), double-buffered when above 1.
    static_assert(TRC >= 8 && TRC <= 32 && TRC * (16 / sizeof(T)) % 32 == 0 && TCC % 8 == 0 && (NT == 32 * TCC || NT == 16 * TCC) && TPB >= 1,
                  "tile shape");
    extern __shared__ uint4 smem[];
    if (((reinterpret_cast<size_t>(in) | reinterpret_cast<size_t>(out)) & 15) != 0) {
        // vec_peeled's element path, the same tiles.
        constexpr int V = 16 / sizeof(T);
        const int ntiles = ((rows + TRC * V - 1) / (TRC * V)) * ((cols + TCC * V - 1) / (TCC * V));
        for (int t = blockIdx.x; t < ntiles; t += gridDim.x) transpose_elements<T, TRC, TCC, NT>(in, out, rows, cols, t);
        return;
    }
    const unsigned urows = rows, ucols = cols;
    const bool odd = realigned_odd_path<T, TCC>() && (urows & ucols & 1);
    if (odd) realigned_tiles<T, TRC, TCC, NT, TPB, true>(in, out, rows, cols, smem);
    else realigned_tiles<T, TRC, TCC, NT, TPB, false>(in, out, rows, cols, smem);
}
// end stage

// stage: copy_wide
// Ceiling references: a plain copy of the same matrix with W-byte accesses (W = sizeof(Word)),
// U accesses per thread issued back to back, one pass (no grid-stride loop). At 4, 8 and 16
// bytes the bench uses U = 4, 2, 1: 16 bytes in flight per thread each.
template <typename T, typename Word, int U>
__global__ void __launch_bounds__(256) copy_wide(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    const size_t words = n * sizeof(T) / sizeof(Word);
    const Word* src = reinterpret_cast<const Word*>(in);
    Word* dst = reinterpret_cast<Word*>(out);
    const size_t first = (size_t)blockIdx.x * blockDim.x * U + threadIdx.x;
    Word w[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        if (first + (size_t)u * blockDim.x < words) w[u] = src[first + (size_t)u * blockDim.x];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        if (first + (size_t)u * blockDim.x < words) dst[first + (size_t)u * blockDim.x] = w[u];
    }
    // Elements past the last whole word: the first block copies them one by one.
    if (blockIdx.x == 0) {
        for (size_t i = words * sizeof(Word) / sizeof(T) + threadIdx.x; i < n; i += blockDim.x) out[i] = in[i];
    }
}
// end stage
