// Experiment kernels (H200, 2026-11-30): what closes the last few percent to memcpy.
// Each is checked bit for bit by ceiling.py before it is timed. Not part of the report's stages.

// ---------------------------------------------------------------------------------------------
// Copy ceilings at W bytes per access, UNROLL independent accesses per thread in flight.
template <typename W, int UNROLL>
__global__ void __launch_bounds__(256) copy_w(const W* __restrict__ in, W* __restrict__ out, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    for (; i + (UNROLL - 1) * blockDim.x < n; i += stride * UNROLL) {
        W v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = in[i + u * blockDim.x];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) out[i + u * blockDim.x] = v[u];
    }
    for (; i < n; i += blockDim.x) out[i] = in[i];
}

// ---------------------------------------------------------------------------------------------
// vec_colwalk generalised: 1-D grid over tiles; GROUP tile columns side by side walk down the
// tile rows together (GROUP 1 = vec_colwalk's order).
__device__ __forceinline__ void tile_of(int b, int tiles_r, int tiles_c, int group, int& tr, int& tc)
{
    const int g = b / (tiles_r * group);
    const int width = min(group, tiles_c - g * group);
    const int rem = b - g * tiles_r * group;
    tc = g * group + rem % width;
    tr = rem / width;
}

template <typename T, int DEPTH, int GROUP>
__global__ void __launch_bounds__(256) tp_vec(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int OUT_CHUNKS = 8 * DEPTH;
    constexpr int TR = 8 * V * DEPTH;
    constexpr int TC = 32 * V;
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    uint4 (*tile)[OUT_CHUNKS] = reinterpret_cast<uint4 (*)[OUT_CHUNKS]>(smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int tr, tc;
    tile_of(blockIdx.x, (rows + TR - 1) / TR, (cols + TC - 1) / TC, GROUP, tr, tc);
    const int r0 = tr * TR, c0 = tc * TC;
    Chunk in_c[DEPTH][V];
    const int col = c0 + V * lane;
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
#pragma unroll
        for (int i = 0; i < V; ++i)
            in_c[d][i].u = *reinterpret_cast<const uint4*>(in + (size_t)(r0 + V * (warp + 8 * d) + i) * cols + col);
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
#pragma unroll
        for (int k = 0; k < V; ++k) {
            Chunk o;
#pragma unroll
            for (int i = 0; i < V; ++i) o.e[i] = in_c[d][i].e[k];
            tile[V * lane + k][(warp + 8 * d) ^ (lane & 7)] = o.u;
        }
    __syncthreads();
    const int ch = threadIdx.x % OUT_CHUNKS;
#pragma unroll
    for (int p = 0; p < V * DEPTH; ++p) {
        const int orow = threadIdx.x / OUT_CHUNKS + (256 / OUT_CHUNKS) * p;
        *reinterpret_cast<uint4*>(out + (size_t)(c0 + orow) * rows + r0 + V * ch) = tile[orow][ch ^ ((orow / V) & 7)];
    }
}

// Persistent tp_vec: each block loops over tiles; the loads of the next tile are issued before
// the stores of the current one, so a block always has loads in flight.
template <typename T, int DEPTH, int GROUP>
__global__ void __launch_bounds__(256) tp_vec_persist(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int OUT_CHUNKS = 8 * DEPTH;
    constexpr int TR = 8 * V * DEPTH;
    constexpr int TC = 32 * V;
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    uint4 (*tile)[OUT_CHUNKS] = reinterpret_cast<uint4 (*)[OUT_CHUNKS]>(smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tiles_r = (rows + TR - 1) / TR, tiles_c = (cols + TC - 1) / TC, ntiles = tiles_r * tiles_c;
    Chunk in_c[DEPTH][V];
    int t = blockIdx.x;
    if (t >= ntiles) return;
    int tr, tc;
    tile_of(t, tiles_r, tiles_c, GROUP, tr, tc);
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
#pragma unroll
        for (int i = 0; i < V; ++i)
            in_c[d][i].u = *reinterpret_cast<const uint4*>(in + (size_t)(tr * TR + V * (warp + 8 * d) + i) * cols + tc * TC + V * lane);
    for (; t < ntiles; t += gridDim.x) {
        const int r0 = tr * TR, c0 = tc * TC;
        __syncthreads();  // the previous tile's stores have read the shared tile
#pragma unroll
        for (int d = 0; d < DEPTH; ++d)
#pragma unroll
            for (int k = 0; k < V; ++k) {
                Chunk o;
#pragma unroll
                for (int i = 0; i < V; ++i) o.e[i] = in_c[d][i].e[k];
                tile[V * lane + k][(warp + 8 * d) ^ (lane & 7)] = o.u;
            }
        __syncthreads();
        if (t + gridDim.x < ntiles) {
            tile_of(t + gridDim.x, tiles_r, tiles_c, GROUP, tr, tc);
#pragma unroll
            for (int d = 0; d < DEPTH; ++d)
#pragma unroll
                for (int i = 0; i < V; ++i)
                    in_c[d][i].u = *reinterpret_cast<const uint4*>(in + (size_t)(tr * TR + V * (warp + 8 * d) + i) * cols + tc * TC + V * lane);
        }
        const int ch = threadIdx.x % OUT_CHUNKS;
#pragma unroll
        for (int p = 0; p < V * DEPTH; ++p) {
            const int orow = threadIdx.x / OUT_CHUNKS + (256 / OUT_CHUNKS) * p;
            *reinterpret_cast<uint4*>(out + (size_t)(c0 + orow) * rows + r0 + V * ch) = tile[orow][ch ^ ((orow / V) & 7)];
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hopper bulk copies: one warp streams tile rows into shared memory with cp.async.bulk
// (global -> shared, completion counted on an mbarrier) STAGES tiles ahead; all 8 warps
// transpose VxV micro-blocks out of shared memory and store 16 bytes per thread.
// Tile: TR = OUTCH * V input rows x 32 * V input columns (each row 512 bytes). Shared rows are
// padded by one 16-byte chunk per group of V rows, so the column reads are conflict-free.
__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ unsigned mbar_try_wait(unsigned long long* bar, unsigned parity)
{
    unsigned ok;
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%1], %2;\n"
        "selp.u32 %0, 1, 0, done;\n"
        "}\n" : "=r"(ok) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    return ok;
}

// Bounded: an experiment that never completes its barrier traps instead of hanging the GPU.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity)
{
    for (long long n = 0; !mbar_try_wait(bar, parity); ++n)
        if (n > (1ll << 28)) __trap();
}

__device__ __forceinline__ void bulk_g2s(void* dst, const void* src, unsigned bytes, unsigned long long* bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

template <typename T, int OUTCH>
struct BulkTile {
    static constexpr int V = 16 / sizeof(T);
    static constexpr int TR = OUTCH * V;
    static constexpr int TC = 32 * V;
    static constexpr int CHUNKS = TR * 32 + OUTCH;  // 16-byte chunks incl. one pad chunk per V rows
    __device__ static int row_chunk(int r) { return r * 32 + r / V; }
};

template <typename T, int OUTCH, int STAGES>
__device__ __forceinline__ void bulk_issue(const T* __restrict__ in, uint4* buf, unsigned long long* bar,
                                           int tr, int tc, int cols, int lane)
{
    using B = BulkTile<T, OUTCH>;
    if (lane == 0) mbar_expect_tx(bar, B::TR * 512);
    __syncwarp();
#pragma unroll
    for (int r = lane; r < B::TR; r += 32)
        bulk_g2s(buf + B::row_chunk(r), in + (size_t)(tr * B::TR + r) * cols + (size_t)tc * B::TC, 512, bar);
}

template <typename T, int OUTCH, int STAGES, int GROUP>
__global__ void __launch_bounds__(256) tp_bulk(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    using B = BulkTile<T, OUTCH>;
    constexpr int V = B::V;
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    __shared__ unsigned long long bars[STAGES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tiles_r = rows / B::TR, tiles_c = cols / B::TC, ntiles = tiles_r * tiles_c;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&bars[s], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) {
        for (int s = 0; s < STAGES; ++s) {
            const int t = blockIdx.x + s * gridDim.x;
            if (t < ntiles) {
                int tr, tc;
                tile_of(t, tiles_r, tiles_c, GROUP, tr, tc);
                bulk_issue<T, OUTCH, STAGES>(in, smem + s * B::CHUNKS, &bars[s], tr, tc, cols, lane);
            }
        }
    }
    // Consumer mapping: j = which V-row group (output chunk), ch = which input chunk column.
    const int j = threadIdx.x % OUTCH;
    int it = 0;
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x, ++it) {
        const int s = it % STAGES;
        mbar_wait(&bars[s], (it / STAGES) & 1);
        int tr, tc;
        tile_of(t, tiles_r, tiles_c, GROUP, tr, tc);
        const uint4* buf = smem + s * B::CHUNKS;
#pragma unroll
        for (int q = 0; q < OUTCH / 8; ++q) {
            const int ch = threadIdx.x / OUTCH + (256 / OUTCH) * q;
            Chunk in_c[V];
#pragma unroll
            for (int i = 0; i < V; ++i) in_c[i].u = buf[B::row_chunk(V * j + i) + ch];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                Chunk o;
#pragma unroll
                for (int i = 0; i < V; ++i) o.e[i] = in_c[i].e[k];
                const size_t orow = (size_t)tc * B::TC + V * ch + k;
                *reinterpret_cast<uint4*>(out + orow * rows + (size_t)tr * B::TR + V * j) = o.u;
            }
        }
        __syncthreads();  // every warp is done reading buffer s
        if (warp == 0) {
            const int tn = t + STAGES * gridDim.x;
            if (tn < ntiles) {
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                int trn, tcn;
                tile_of(tn, tiles_r, tiles_c, GROUP, trn, tcn);
                bulk_issue<T, OUTCH, STAGES>(in, smem + s * B::CHUNKS, &bars[s], trn, tcn, cols, lane);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// vec_colwalk with its tile shape as parameters: a tile is TRC x TCC micro-blocks of V x V
// elements (input rows: TRC * V, input columns: TCC * V; each input row segment TCC * 16 bytes,
// each output row segment TRC * 16 bytes); NT threads; each thread moves TRC * TCC / NT
// micro-blocks. 1-D grid, tiles walk down the input first (vec_colwalk's order).
// 16-byte load that skips L1 and asks L2 to fetch the whole 256-byte block around it.
__device__ __forceinline__ uint4 ld_pf256(const void* p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

template <typename T, int TRC, int TCC, int NT, int MINB = 1, bool PF = false>
__global__ void __launch_bounds__(NT, MINB) tp_gen(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int P = TRC * TCC / NT;
    static_assert(P >= 1 && TRC % 8 == 0 && TCC % 8 == 0 && NT % TCC == 0 && NT % TRC == 0, "tile shape");
    union Chunk { uint4 u; T e[V]; };
    extern __shared__ uint4 smem[];
    uint4 (*tile)[TRC] = reinterpret_cast<uint4 (*)[TRC]>(smem);
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
                if (PF) in_c[p][i].u = ld_pf256(in + (size_t)r * cols + col);
                else in_c[p][i].u = *reinterpret_cast<const uint4*>(in + (size_t)r * cols + col);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k)
                    in_c[p][i].e[k] = (r < rows && col + k < cols) ? in[(size_t)r * cols + col + k] : T(0);
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
            for (int k = 0; k < V; ++k)
                if (gr < cols && gc + k < rows) out[(size_t)gr * rows + gc + k] = o.e[k];
        }
    }
}
