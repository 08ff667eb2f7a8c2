// bf16 GEMM stages for profiler-report: C = A B^T on the tensor cores (Hopper, sm_90a), bf16
// inputs, float32 accumulation, bf16 output (rounded to nearest even once, at the end).
//
// Layout ("TN"): A is M x K row-major, B is given as N x K row-major (B^T: each of B's columns is
// a contiguous row of K values), C is M x N row-major with row stride N. A and B share the row
// stride `ld` = K rounded up to a multiple of 8 elements, the padding zero-filled by the case's
// input builder, so every 16-byte load of a row is aligned and whole (it never straddles the end
// of a row). Both operands are K-major, the layout the tensor-core instructions read without a
// transpose. The kernels' K loops run over `ld` (the padding adds zero products); K itself is
// passed for the record.
//
// Every kernel is correct at any M, N, K >= 1: tile loads outside A or B read zeros (cp.async
// with a source size of 0 bytes), stores outside C are skipped, and the 4-byte stores of two
// results fall back to single 2-byte stores at the right edge or when N is odd.
//
// Launch (profiler_report/cases/hgemm/launch.py): 256 threads, one block per BM x BN tile of C,
// grid (ceil(N / BN), ceil(M / BM)). `mma_sync` uses 40 KB of static shared memory; the wgmma
// stages take dynamic shared memory (STAGES tiles of A and B plus 1 KB to align the first to
// 1024 bytes, as the 128-byte swizzle needs). The source needs `-arch=sm_90a` (wgmma).
//
// Each stage sits between `// stage: <id>` and `// end stage` markers; the report shows the
// source diff from one stage to the next.

// ---- shared helpers ------------------------------------------------------------------------

// The shared-window address of a pointer into shared memory (what cp.async, ldmatrix and the
// wgmma descriptors take).
__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously, bypassing L1; `valid` false writes 16 zero bytes
// and reads nothing (`src` must still be a valid address: callers pass the matrix's first row).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Wait until at most N of this thread's committed cp.async groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Two float32 results as one bf16x2 word: `lo` in the low half (the lower address).
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ unsigned short to_bf16(float x)
{
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
    return r;
}

// C[row][col] and C[row][col + 1] (col even) as bf16; what lies outside M x N is skipped. One
// 4-byte store when both are inside and N is even (the pair is then 4-byte aligned).
template <typename T>
__device__ __forceinline__ void store2(T* __restrict__ C, int row, int col, int M, int N, float lo, float hi)
{
    if (row >= M || col >= N) return;
    T* p = C + (size_t)row * N + col;
    if (col + 1 < N && (N & 1) == 0) {
        *reinterpret_cast<unsigned*>(p) = pack_bf16x2(lo, hi);
        return;
    }
    p[0] = to_bf16(lo);
    if (col + 1 < N) p[1] = to_bf16(hi);
}

// ---- warp-level MMA (mma.sync) ---------------------------------------------------------------

// Four 8 x 8 b16 matrices from shared memory: lanes 8i..8i+7 give the row addresses of matrix i;
// each lane receives, per matrix, row lane / 4, elements 2 (lane % 4) and 2 (lane % 4) + 1.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

// d (16 x 8, f32) += a (16 x 16 bf16, row-major fragment) x b (16 x 8 bf16, column-major fragment).
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- warpgroup MMA (wgmma) -------------------------------------------------------------------

// A K-major operand tile in shared memory, 128-byte swizzle: row r (an M or N index) of 64 bf16
// (128 bytes) at byte r * 128 of a 1024-byte-aligned tile; its 16-byte chunk c (elements
// 8c..8c+7) stored at chunk position c ^ (r % 8). That is the hardware's 128B swizzle: address bits
// [4, 7) XOR bits [7, 10), so a tile that starts on a 1024-byte boundary sees exactly this map.
__device__ __forceinline__ unsigned sw128_offset(int r, int c)
{
    return (unsigned)(r * 128 + ((c ^ (r & 7)) << 4));
}

// Rows row0 .. row0 + ROWS - 1, elements k0 .. k0 + 63 of a rows x ld matrix into a swizzled tile
// at `dst` (256 threads, ROWS * 8 / 256 chunks each; consecutive threads take consecutive chunks
// of a row: one warp reads four whole 128-byte row segments). Outside the matrix: zeros.
template <int ROWS, typename T>
__device__ __forceinline__ void load_tile_sw128(unsigned dst, const T* __restrict__ src, int row0, int rows, int k0,
                                                int ld, int tid)
{
#pragma unroll
    for (int i = 0; i < ROWS * 8 / 256; ++i) {
        const int id = tid + i * 256, r = id / 8, c = id % 8;
        const int row = row0 + r, k = k0 + c * 8;
        const bool ok = row < rows && k < ld;
        cp_async16(dst + sw128_offset(r, c), src + (ok ? (size_t)row * ld + k : 0), ok);
    }
}

// The wgmma shared-memory matrix descriptor of a swizzled K-major tile (see sw128_offset) whose
// (logical, unswizzled) start is `addr`: bits [0, 14) start address >> 4; [16, 30) leading-
// dimension byte offset >> 4 (1: unused by a K-major swizzled operand whose K extent per
// instruction, 16 elements, lies inside one 128-byte row); [32, 46) stride byte offset >> 4 (64:
// 1024 bytes from one group of 8 rows to the next); [49, 52) base offset 0 (the tile is 1024-byte
// aligned); [62, 64) swizzle mode 1 = 128B. Stepping K by 16 elements adds 32 bytes to `addr`.
__device__ __forceinline__ unsigned long long desc_sw128(unsigned addr)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

// Order this thread's generic-proxy shared-memory writes (the cp.async tile copies) before later
// async-proxy reads (wgmma's operand fetches).
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keep the compiler from moving accumulator reads or writes across an in-flight wgmma.
template <int R>
__device__ __forceinline__ void fence_acc(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulator fragment of m64nNk16 (f32): warp w of the warpgroup holds rows 16w .. 16w + 15;
// register 4j + q of a lane is row 16w + lane / 4 + 8 (q / 2), column 8j + 2 (lane % 4) + q % 2.
template <int R, typename T>
__device__ __forceinline__ void store_wgmma_tile(T* __restrict__ C, const float (&d)[R], int row0, int col0, int M,
                                                 int N, int lane_in_wg)
{
    const int row = row0 + (lane_in_wg / 32) * 16 + (lane_in_wg % 32) / 4;
    const int col = col0 + 2 * (lane_in_wg % 4);
#pragma unroll
    for (int j = 0; j < R / 4; ++j) {
        store2(C, row, col + 8 * j, M, N, d[4 * j], d[4 * j + 1]);
        store2(C, row + 8, col + 8 * j, M, N, d[4 * j + 2], d[4 * j + 3]);
    }
}

// One m64n128k16 bf16 x bf16 -> f32 warpgroup MMA: d += A (64 x 16, K-major, from `da`) x B (16 x 128,
// K-major, from `db`); scale-d 1 (accumulate), no negation, no transpose (both operands K-major).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], unsigned long long da, unsigned long long db)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "n"(1));
}

// One m64n256k16 bf16 x bf16 -> f32 warpgroup MMA: d += A (64 x 16, K-major, from `da`) x B (16 x 256,
// K-major, from `db`); scale-d 1 (accumulate), no negation, no transpose (both operands K-major).
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "n"(1));
}

// ---- the tensor memory accelerator (TMA) and shared-memory barriers ---------------------------

// A tensor map: the 128-byte descriptor of a 2-D global matrix and of the box one copy moves,
// encoded on the host by the driver (cuTensorMapEncodeTiled: profiler_report/cases/hgemm/tma.py)
// and passed by value as a __grid_constant__ parameter, so the TMA unit reads it from the
// kernel's parameter space.
struct __align__(64) TmaMap {
    unsigned long long words[16];
};

// An mbarrier in shared memory that completes a phase once `count` threads have arrived (and
// every byte announced by an arrive.expect_tx has landed).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Make the barriers' initialisation visible to the async proxy (the TMA unit) before any copy
// signals them.
__device__ __forceinline__ void fence_barrier_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Arrive once and announce `bytes` of copies that must also land before the phase completes.
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Wait until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so a wait
// for parity 1 returns at once (the producer's first pass over empty buffers).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n"
                     ".reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n"
                     "}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    }
}

// One TMA copy of the box at element (col, row) of `map`'s matrix into shared memory at `dst`,
// completing `bytes` of `bar`'s transaction count. Box elements outside the matrix land as
// zeros, and still count.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TmaMap* map, unsigned bar, int col, int row)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(col), "r"(row)
                 : "memory");
}

// Give this warpgroup's registers back to the SM (the producer) or take more (the consumers):
// both must be multiples of 8 and every warp of the warpgroup must execute it.
template <int N>
__device__ __forceinline__ void warpgroup_regs_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N>
__device__ __forceinline__ void warpgroup_regs_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// ---- the order of the output tiles ------------------------------------------------------------

// Tile t (in launch order) of a tiles_m x tiles_n grid of BM x BN output tiles, in a grouped order:
// GROUP tile rows at a time, walked down the columns, so the tiles running at once share rows of A
// and columns of B in L2. GROUP 1 is the plain row-by-row order. Sets the tile's first row and column.
template <int BM, int BN, int GROUP>
__device__ __forceinline__ void grouped_tile(int t, int tiles_m, int tiles_n, int& row0, int& col0)
{
    const int band = t / (GROUP * tiles_n), first = band * GROUP;
    const int rows = min(tiles_m - first, GROUP), in_band = t - band * GROUP * tiles_n;
    row0 = (first + in_band % rows) * BM;
    col0 = (in_band / rows) * BN;
}

// stage: mma_sync
// Warp-level tensor-core MMA: a 128 x 128 tile of C per block of 8 warps, each warp a 64 x 32
// sub-tile as 4 x 4 mma.sync m16n8k16 (f32 += bf16 x bf16). K steps of 32 through two shared
// buffers filled by cp.async (the next tile's copy in flight while this one is computed);
// fragments come from shared memory with ldmatrix. Rows padded to 40 elements (80 bytes): the
// eight rows one ldmatrix phase reads fall in eight different 16-byte bank groups.
template <typename T>
__global__ void __launch_bounds__(256) hgemm_mma_sync(const T* __restrict__ A, const T* __restrict__ B,
                                                      T* __restrict__ C, int M, int N, int K, int ld)
{
    constexpr int BM = 128, BN = 128, BK = 32, LDS = BK + 8;
    __shared__ __align__(16) T As[2][BM * LDS];
    __shared__ __align__(16) T Bs[2][BN * LDS];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / 4, wn = warp % 4;  // this warp's 64 x 32 sub-tile: rows 64 wm, columns 32 wn
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int ktiles = (ld + BK - 1) / BK;
    float acc[4][4][4] = {};  // [16-row tile][8-column tile][fragment]

    auto load = [&](int kt, int s) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {  // 128 rows x 4 chunks of 16 bytes, per operand
            const int id = tid + i * 256, r = id / 4, c = id % 4, k = kt * BK + c * 8;
            const bool a_ok = bm + r < M && k < ld, b_ok = bn + r < N && k < ld;
            cp_async16(smem_u32(&As[s][r * LDS + c * 8]), A + (a_ok ? (size_t)(bm + r) * ld + k : 0), a_ok);
            cp_async16(smem_u32(&Bs[s][r * LDS + c * 8]), B + (b_ok ? (size_t)(bn + r) * ld + k : 0), b_ok);
        }
    };

    load(0, 0);
    cp_async_commit();
    for (int kt = 0; kt < ktiles; ++kt) {
        if (kt + 1 < ktiles) load(kt + 1, (kt + 1) & 1);
        cp_async_commit();
        cp_async_wait<1>();  // this tile's copies have landed (the next tile's may still fly)
        __syncthreads();
        const T* as = As[kt & 1];
        const T* bs = Bs[kt & 1];
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[4][4], b[4][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {  // matrices: rows 0-7 / 8-15 x k 0-7, then x k 8-15
                const int r = wm * 64 + mi * 16 + lane % 16, c = kk + (lane / 16) * 8;
                ldmatrix_x4(a[mi], smem_u32(&as[r * LDS + c]));
            }
#pragma unroll
            for (int nj = 0; nj < 2; ++nj) {  // matrices: n 0-7 x k 0-7 / k 8-15, then n 8-15
                const int r = wn * 32 + nj * 16 + (lane / 16) * 8 + lane % 8, c = kk + ((lane / 8) % 2) * 8;
                unsigned t[4];
                ldmatrix_x4(t, smem_u32(&bs[r * LDS + c]));
                b[2 * nj][0] = t[0];
                b[2 * nj][1] = t[1];
                b[2 * nj + 1][0] = t[2];
                b[2 * nj + 1][1] = t[3];
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma_m16n8k16(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
        }
        __syncthreads();  // every warp is done with this buffer before it is refilled
    }
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int row = bm + wm * 64 + mi * 16 + lane / 4, col = bn + wn * 32 + ni * 8 + 2 * (lane % 4);
            store2(C, row, col, M, N, acc[mi][ni][0], acc[mi][ni][1]);
            store2(C, row + 8, col, M, N, acc[mi][ni][2], acc[mi][ni][3]);
        }
}
// end stage

// stage: wgmma
// Hopper's warpgroup MMA: each of the block's two warpgroups computes 64 x 128 of a 128 x 128
// tile with wgmma m64n128k16, both operands read from shared memory through descriptors (no
// ldmatrix, no fragments in registers but the accumulators). Tiles are 64 deep, stored in the
// 128-byte swizzle layout, and STAGES of them are in flight (cp.async, zero-filled at the edges).
template <typename T, int STAGES>
__global__ void __launch_bounds__(256) hgemm_wgmma(const T* __restrict__ A, const T* __restrict__ B,
                                                   T* __restrict__ C, int M, int N, int K, int ld)
{
    constexpr int BM = 128, BN = 128, BK = 64;
    constexpr unsigned A_BYTES = BM * BK * 2, TILE_BYTES = A_BYTES + BN * BK * 2;
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;  // the swizzle needs 1024-byte-aligned tiles
    const int tid = threadIdx.x, wg = tid / 128;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int ktiles = (ld + BK - 1) / BK;
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.0f;

    auto load = [&](int kt, int s) {
        load_tile_sw128<BM>(base + s * TILE_BYTES, A, bm, M, kt * BK, ld, tid);
        load_tile_sw128<BN>(base + s * TILE_BYTES + A_BYTES, B, bn, N, kt * BK, ld, tid);
    };

    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) load(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's part of it)
        fence_proxy_async();          // ... and is visible to wgmma's operand reads
        __syncthreads();              // every thread's part; every warpgroup is done with tile kt - 1
        const int next = kt + STAGES - 1;
        if (next < ktiles) load(next, next % STAGES);  // into the buffer tile kt - 1 used
        cp_async_commit();
        const unsigned sa = base + (kt % STAGES) * TILE_BYTES + wg * 64 * 128, sb = base + (kt % STAGES) * TILE_BYTES + A_BYTES;
        fence_acc(d);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) wgmma_m64n128k16(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k));
        wgmma_commit();
        wgmma_wait<0>();
        fence_acc(d);
    }
    store_wgmma_tile(C, d, bm + wg * 64, bn, M, N, tid % 128);
}
// end stage

// stage: wide_tile
// A wider tile: 128 x 256 per block, each warpgroup 64 x 256 with wgmma m64n256k16 (128
// accumulators per thread). Each A tile in shared memory now feeds twice as many columns, so the
// block reads 3/4 of the shared and global bytes per MMA that the 128 x 128 tile did.
template <typename T, int STAGES>
__global__ void __launch_bounds__(256, 1) hgemm_wide_tile(const T* __restrict__ A, const T* __restrict__ B,
                                                          T* __restrict__ C, int M, int N, int K, int ld)
{
    constexpr int BM = 128, BN = 256, BK = 64;
    constexpr unsigned A_BYTES = BM * BK * 2, TILE_BYTES = A_BYTES + BN * BK * 2;
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;  // the swizzle needs 1024-byte-aligned tiles
    const int tid = threadIdx.x, wg = tid / 128;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int ktiles = (ld + BK - 1) / BK;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;

    auto load = [&](int kt, int s) {
        load_tile_sw128<BM>(base + s * TILE_BYTES, A, bm, M, kt * BK, ld, tid);
        load_tile_sw128<BN>(base + s * TILE_BYTES + A_BYTES, B, bn, N, kt * BK, ld, tid);
    };

    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) load(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's part of it)
        fence_proxy_async();          // ... and is visible to wgmma's operand reads
        __syncthreads();              // every thread's part; every warpgroup is done with tile kt - 1
        const int next = kt + STAGES - 1;
        if (next < ktiles) load(next, next % STAGES);  // into the buffer tile kt - 1 used
        cp_async_commit();
        const unsigned sa = base + (kt % STAGES) * TILE_BYTES + wg * 64 * 128, sb = base + (kt % STAGES) * TILE_BYTES + A_BYTES;
        fence_acc(d);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) wgmma_m64n256k16(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k));
        wgmma_commit();
        wgmma_wait<0>();
        fence_acc(d);
    }
    store_wgmma_tile(C, d, bm + wg * 64, bn, M, N, tid % 128);
}
// end stage

// stage: mma_in_flight
// The wide tile with its MMAs kept in flight: after issuing tile kt's wgmmas a warpgroup waits
// only for tile kt - 1's (wgmma.wait_group 1), so the tensor pipe never drains between tiles.
// The copies then go two tiles ahead, into the buffer tile kt - 2 used: the last one no MMA may
// still be reading.
template <typename T, int STAGES>
__global__ void __launch_bounds__(256, 1) hgemm_mma_in_flight(const T* __restrict__ A, const T* __restrict__ B,
                                                              T* __restrict__ C, int M, int N, int K, int ld)
{
    static_assert(STAGES >= 3, "two tiles in flight plus the one the MMAs read");
    constexpr int BM = 128, BN = 256, BK = 64;
    constexpr unsigned A_BYTES = BM * BK * 2, TILE_BYTES = A_BYTES + BN * BK * 2;
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;  // the swizzle needs 1024-byte-aligned tiles
    const int tid = threadIdx.x, wg = tid / 128;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int ktiles = (ld + BK - 1) / BK;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;

    auto load = [&](int kt, int s) {
        load_tile_sw128<BM>(base + s * TILE_BYTES, A, bm, M, kt * BK, ld, tid);
        load_tile_sw128<BN>(base + s * TILE_BYTES + A_BYTES, B, bn, N, kt * BK, ld, tid);
    };

    for (int s = 0; s < STAGES - 2; ++s) {
        if (s < ktiles) load(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 3>();  // tile kt has landed (this thread's part of it)
        fence_proxy_async();          // ... and is visible to wgmma's operand reads
        __syncthreads();              // every thread's part; every warpgroup's MMAs of tile kt - 2 are done
        const int next = kt + STAGES - 2;
        if (next < ktiles) load(next, next % STAGES);  // into the buffer tile kt - 2 used
        cp_async_commit();
        const unsigned sa = base + (kt % STAGES) * TILE_BYTES + wg * 64 * 128, sb = base + (kt % STAGES) * TILE_BYTES + A_BYTES;
        fence_acc(d);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) wgmma_m64n256k16(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k));
        wgmma_commit();
        wgmma_wait<1>();  // tile kt - 1's MMAs are done; tile kt's may still run
        fence_acc(d);
    }
    wgmma_wait<0>();
    fence_acc(d);
    store_wgmma_tile(C, d, bm + wg * 64, bn, M, N, tid % 128);
}
// end stage

// stage: tma_loads
// The copies by the tensor memory accelerator (TMA): one thread issues each tile's two copies
// (A 128 x 64 and B 256 x 64, swizzled by the copy engine into the layout the descriptors read,
// zeros outside the matrices), and an mbarrier per buffer counts their bytes. No thread computes
// a tile address or issues a cp.async any more; the warpgroups only wait on the barrier. The
// rest is the previous stage: two warpgroups, wgmma m64n256k16, one tile's MMAs in flight.
// Block b of the launch computes tile b of grouped_tile's order: GROUP 1 is the launch's own
// row-by-row order; the tile_order stage is this kernel with GROUP 16.
template <typename T, int STAGES, int GROUP>
__global__ void __launch_bounds__(256, 1) hgemm_tma_loads(const __grid_constant__ TmaMap amap,
                                                          const __grid_constant__ TmaMap bmap, T* __restrict__ C,
                                                          int M, int N, int K, int ld)
{
    static_assert(STAGES >= 3, "two tiles in flight plus the one the MMAs read");
    constexpr int BM = 128, BN = 256, BK = 64;
    constexpr unsigned A_BYTES = BM * BK * 2, TILE_BYTES = A_BYTES + BN * BK * 2;
    extern __shared__ unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[STAGES];
    const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;  // the swizzle needs 1024-byte-aligned tiles
    const int tid = threadIdx.x, wg = tid / 128;
    int bm, bn;
    grouped_tile<BM, BN, GROUP>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, bm, bn);
    const int ktiles = (ld + BK - 1) / BK;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;

    auto load = [&](int kt, int s) {  // one thread: both copies of tile kt into buffer s
        const unsigned bar = smem_u32(&full[s]);
        mbar_expect_tx(bar, TILE_BYTES);
        tma_load_2d(base + s * TILE_BYTES, &amap, bar, kt * BK, bm);
        tma_load_2d(base + s * TILE_BYTES + A_BYTES, &bmap, bar, kt * BK, bn);
    };

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(smem_u32(&full[s]), 1);
        fence_barrier_init();
        for (int s = 0; s < STAGES - 2 && s < ktiles; ++s) load(s, s);
    }
    __syncthreads();
    for (int kt = 0; kt < ktiles; ++kt) {
        __syncthreads();  // every warpgroup's MMAs of tile kt - 2 are done: its buffer is free
        const int next = kt + STAGES - 2;
        if (tid == 0 && next < ktiles) load(next, next % STAGES);
        mbar_wait(smem_u32(&full[kt % STAGES]), (kt / STAGES) & 1);  // tile kt has landed
        const unsigned sa = base + (kt % STAGES) * TILE_BYTES + wg * 64 * 128, sb = base + (kt % STAGES) * TILE_BYTES + A_BYTES;
        fence_acc(d);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) wgmma_m64n256k16(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k));
        wgmma_commit();
        wgmma_wait<1>();  // tile kt - 1's MMAs are done; tile kt's may still run
        fence_acc(d);
    }
    wgmma_wait<0>();
    fence_acc(d);
    store_wgmma_tile(C, d, bm + wg * 64, bn, M, N, tid % 128);
}
// end stage

// stage: warp_specialized
// A producer warpgroup and two consumer warpgroups: one thread of the producer issues the TMA
// copies as soon as a buffer is free, while the consumers only wait for full buffers and issue
// wgmmas. Two mbarriers per buffer replace the block-wide barrier: `full` (the copies' bytes
// have landed) and `empty` (every consumer warp's MMAs that read it are done). The producer
// gives most of its registers to the consumers (setmaxnreg 40 / 232).
template <typename T, int STAGES, int GROUP>
__global__ void __launch_bounds__(384, 1) hgemm_warp_specialized(const __grid_constant__ TmaMap amap,
                                                                 const __grid_constant__ TmaMap bmap,
                                                                 T* __restrict__ C, int M, int N, int K, int ld)
{
    static_assert(STAGES >= 2, "a buffer to fill while another is read");
    constexpr int BM = 128, BN = 256, BK = 64, CONSUMER_WARPS = 8;
    constexpr unsigned A_BYTES = BM * BK * 2, TILE_BYTES = A_BYTES + BN * BK * 2;
    extern __shared__ unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;  // the swizzle needs 1024-byte-aligned tiles
    const int tid = threadIdx.x, wg = tid / 128;
    int bm, bn;
    grouped_tile<BM, BN, GROUP>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, bm, bn);
    const int ktiles = (ld + BK - 1) / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), CONSUMER_WARPS);
        }
        fence_barrier_init();
    }
    __syncthreads();

    if (wg == 0) {  // the producer
        warpgroup_regs_dec<40>();
        if (tid == 0) {
            for (int kt = 0; kt < ktiles; ++kt) {
                const int s = kt % STAGES;
                mbar_wait(smem_u32(&empty[s]), ((kt / STAGES) & 1) ^ 1);  // its last readers are done
                const unsigned bar = smem_u32(&full[s]);
                mbar_expect_tx(bar, TILE_BYTES);
                tma_load_2d(base + s * TILE_BYTES, &amap, bar, kt * BK, bm);
                tma_load_2d(base + s * TILE_BYTES + A_BYTES, &bmap, bar, kt * BK, bn);
            }
        }
        return;
    }
    warpgroup_regs_inc<232>();
    const int cw = wg - 1, lane = tid % 32;  // consumer cw computes rows 64 cw .. 64 cw + 63 of the tile
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        mbar_wait(smem_u32(&full[s]), (kt / STAGES) & 1);
        const unsigned sa = base + s * TILE_BYTES + cw * 64 * 128, sb = base + s * TILE_BYTES + A_BYTES;
        fence_acc(d);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) wgmma_m64n256k16(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k));
        wgmma_commit();
        wgmma_wait<1>();  // tile kt - 1's MMAs are done: its buffer may be refilled
        fence_acc(d);
        if (kt > 0 && lane == 0) mbar_arrive(smem_u32(&empty[(kt - 1) % STAGES]));
    }
    wgmma_wait<0>();
    fence_acc(d);
    store_wgmma_tile(C, d, bm + cw * 64, bn, M, N, tid % 128);
}
// end stage

// stage: persistent
// One block per SM for the whole run: each block walks the output tiles blockIdx.x, blockIdx.x +
// gridDim.x, ... of the grouped order. The producer's ring of buffers runs on across tiles, so the
// next tile's copies land while the consumers store this one's results, and no block waits to be
// scheduled or fills its pipeline from empty.
template <typename T, int STAGES, int GROUP>
__global__ void __launch_bounds__(384, 1) hgemm_persistent(const __grid_constant__ TmaMap amap,
                                                           const __grid_constant__ TmaMap bmap,
                                                           T* __restrict__ C, int M, int N, int K, int ld)
{
    static_assert(STAGES >= 2, "a buffer to fill while another is read");
    constexpr int BM = 128, BN = 256, BK = 64, CONSUMER_WARPS = 8;
    constexpr unsigned A_BYTES = BM * BK * 2, TILE_BYTES = A_BYTES + BN * BK * 2;
    extern __shared__ unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;  // the swizzle needs 1024-byte-aligned tiles
    const int tid = threadIdx.x, wg = tid / 128;
    const int ktiles = (ld + BK - 1) / BK;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, ntiles = tiles_m * tiles_n;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), CONSUMER_WARPS);
        }
        fence_barrier_init();
    }
    __syncthreads();

    if (wg == 0) {  // the producer
        warpgroup_regs_dec<40>();
        if (tid == 0) {
            int it = 0;  // position in the ring, across tiles
            for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
                int bm, bn;
                grouped_tile<BM, BN, GROUP>(t, tiles_m, tiles_n, bm, bn);
                for (int kt = 0; kt < ktiles; ++kt, ++it) {
                    const int s = it % STAGES;
                    mbar_wait(smem_u32(&empty[s]), ((it / STAGES) & 1) ^ 1);  // its last readers are done
                    const unsigned bar = smem_u32(&full[s]);
                    mbar_expect_tx(bar, TILE_BYTES);
                    tma_load_2d(base + s * TILE_BYTES, &amap, bar, kt * BK, bm);
                    tma_load_2d(base + s * TILE_BYTES + A_BYTES, &bmap, bar, kt * BK, bn);
                }
            }
        }
        return;
    }
    warpgroup_regs_inc<232>();
    const int cw = wg - 1, lane = tid % 32;  // consumer cw computes rows 64 cw .. 64 cw + 63 of each tile
    int it = 0;
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
        int bm, bn;
        grouped_tile<BM, BN, GROUP>(t, tiles_m, tiles_n, bm, bn);
        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = 0.0f;
        for (int kt = 0; kt < ktiles; ++kt, ++it) {
            const int s = it % STAGES;
            mbar_wait(smem_u32(&full[s]), (it / STAGES) & 1);
            const unsigned sa = base + s * TILE_BYTES + cw * 64 * 128, sb = base + s * TILE_BYTES + A_BYTES;
            fence_acc(d);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 16; ++k) wgmma_m64n256k16(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k));
            wgmma_commit();
            wgmma_wait<1>();  // the previous k tile's MMAs are done: its buffer may be refilled
            fence_acc(d);
            if (kt > 0 && lane == 0) mbar_arrive(smem_u32(&empty[(it - 1) % STAGES]));
        }
        wgmma_wait<0>();
        fence_acc(d);
        if (lane == 0) mbar_arrive(smem_u32(&empty[(it - 1) % STAGES]));  // the tile's last buffer
        store_wgmma_tile(C, d, bm + cw * 64, bn, M, N, tid % 128);
    }
}
// end stage
