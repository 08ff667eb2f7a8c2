// GEMM stages for profiler-report: C = A B, row-major float32, on the CUDA cores (FFMA).
//
// A is M x K, B is K x N, C is M x N, all row-major and dense (leading dimensions K, N, N).
// The ladder follows S. Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like
// Performance": each stage changes one thing. Every kernel is correct at any M, N, K >= 1:
// tile loads outside the matrices read zeros, stores outside C are skipped, and the 16-byte
// paths fall back to single words when a row length is not a multiple of 4 (K for A, N for B
// and C) or a vector would cross the edge.
//
// Launch (profiler_report/cases/gemm/launch.py): `naive` 32 x 32 threads, x along the rows of
// C; `tile32` 32 x 32 threads, x along the columns; every later stage a 1-D block of the
// template's thread count, one block per BM x BN tile of C, grid (ceil(N / BN), ceil(M / BM)).
// No dynamic shared memory: every tile is a static array under 48 KB.
//
// Each stage sits between `// stage: <id>` and `// end stage` markers; the report shows the
// source diff from one stage to the next.

static_assert(sizeof(float) == 4, "float32 only");

// A 16-byte vector of row r, columns c..c+3 of a rows x cols row-major matrix; zeros outside.
// `vec`: cols % 4 == 0, so that a vector inside the row is 16-byte aligned.
template <typename T>
__device__ __forceinline__ float4 load4(const T* __restrict__ p, int r, int c, int rows, int cols, bool vec)
{
    if (r < rows && vec && c + 3 < cols) {
        return *reinterpret_cast<const float4*>(&p[(size_t)r * cols + c]);
    }
    float4 v;
    const bool in_row = r < rows;
    const size_t base = (size_t)r * cols;
    v.x = in_row && c + 0 < cols ? p[base + c + 0] : 0.0f;
    v.y = in_row && c + 1 < cols ? p[base + c + 1] : 0.0f;
    v.z = in_row && c + 2 < cols ? p[base + c + 2] : 0.0f;
    v.w = in_row && c + 3 < cols ? p[base + c + 3] : 0.0f;
    return v;
}

// Four results of row r, columns c..c+3 into C (rows x cols); what lies outside is skipped.
template <typename T>
__device__ __forceinline__ void store4(T* __restrict__ p, int r, int c, int rows, int cols, bool vec, float4 v)
{
    if (r >= rows) return;
    const size_t base = (size_t)r * cols;
    if (vec && c + 3 < cols) {
        *reinterpret_cast<float4*>(&p[base + c]) = v;
        return;
    }
    if (c + 0 < cols) p[base + c + 0] = v.x;
    if (c + 1 < cols) p[base + c + 1] = v.y;
    if (c + 2 < cols) p[base + c + 2] = v.z;
    if (c + 3 < cols) p[base + c + 3] = v.w;
}

// Four values of a 16-byte shared load into a register array (component-wise: a register array has
// no 16-byte alignment to rely on).
__device__ __forceinline__ void put4(float* r, float4 v)
{
    r[0] = v.x;
    r[1] = v.y;
    r[2] = v.z;
    r[3] = v.w;
}

// stage: naive
// One thread per element of C; threadIdx.x walks down the rows, so the 32 lanes of a warp read
// 32 different rows of A (a sector each) and the same word of B.
template <typename T>
__global__ void gemm_naive(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        C[(size_t)row * N + col] = acc;
    }
}
// end stage

// stage: coalesced
// threadIdx.x walks along the columns: a warp reads one word of A (broadcast) and 32
// consecutive words of B, and writes 32 consecutive words of C.
template <typename T>
__global__ void gemm_coalesced(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N,
                               int K)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        C[(size_t)row * N + col] = acc;
    }
}
// end stage

// stage: shared_tiles
// 32 x 32 tiles of A and B staged in shared memory: each global word is read once per tile
// instead of once per thread, 32 times fewer global loads.
template <typename T>
__global__ void gemm_shared_tiles(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N,
                                  int K)
{
    constexpr int BS = 32;
    __shared__ float As[BS][BS];
    __shared__ float Bs[BS][BS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BS + ty;
    const int col = blockIdx.x * BS + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BS) {
        As[ty][tx] = row < M && k0 + tx < K ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = k0 + ty < K && col < N ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BS; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[(size_t)row * N + col] = acc;
    }
}
// end stage

// stage: blocktile_1d
// Each thread computes TM results of one column of a BM x BN tile: one shared load of B feeds
// TM FFMAs (register reuse along M).
template <typename T, int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM)
gemm_blocktile_1d(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K)
{
    constexpr int NT = BM * BN / TM;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % BN, trow = tid / BN;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = tid; i < BM * BK; i += NT) {
            const int r = row0 + i / BK, c = k0 + i % BK;
            As[i] = r < M && c < K ? A[(size_t)r * K + c] : 0.0f;
        }
#pragma unroll
        for (int i = tid; i < BK * BN; i += NT) {
            const int r = k0 + i / BN, c = col0 + i % BN;
            Bs[i] = r < K && c < N ? B[(size_t)r * N + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k * BN + tcol];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                acc[i] += As[(trow * TM + i) * BK + k] * b;
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + trow * TM + i, c = col0 + tcol;
        if (r < M && c < N) C[(size_t)r * N + c] = acc[i];
    }
}
// end stage

// stage: blocktile_2d
// Each thread computes a TM x TN block: TM + TN shared loads feed TM * TN FFMAs.
template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
gemm_blocktile_2d(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K)
{
    constexpr int NT = BM * BN / (TM * TN);
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {{0.0f}};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = tid; i < BM * BK; i += NT) {
            const int r = row0 + i / BK, c = k0 + i % BK;
            As[i] = r < M && c < K ? A[(size_t)r * K + c] : 0.0f;
        }
#pragma unroll
        for (int i = tid; i < BK * BN; i += NT) {
            const int r = k0 + i / BN, c = col0 + i % BN;
            Bs[i] = r < K && c < N ? B[(size_t)r * N + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) rm[i] = As[(trow * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) rn[j] = Bs[k * BN + tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int r = row0 + trow * TM + i, c = col0 + tcol * TN + j;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
    }
}
// end stage

// stage: vectorized
// 16-byte global loads and stores (float4), and A's tile stored transposed (As[k][m]) so that a
// thread reads its TM values of A, like its TN values of B, as float4 shared loads.
template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
gemm_vectorized(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K)
{
    constexpr int NT = BM * BN / (TM * TN);
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0, "float4 tiles");
    __shared__ __align__(16) float As[BK * BM];
    __shared__ __align__(16) float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;
    float acc[TM][TN] = {{0.0f}};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = tid; i < BM * BK / 4; i += NT) {
            const int r = i / (BK / 4), c = i % (BK / 4) * 4;
            const float4 v = load4(A, row0 + r, k0 + c, M, K, vec_a);
            As[(c + 0) * BM + r] = v.x;
            As[(c + 1) * BM + r] = v.y;
            As[(c + 2) * BM + r] = v.z;
            As[(c + 3) * BM + r] = v.w;
        }
#pragma unroll
        for (int i = tid; i < BK * BN / 4; i += NT) {
            const int r = i / (BN / 4), c = i % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[r * BN + c]) = load4(B, k0 + r, col0 + c, K, N, vec_b);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) put4(&rm[i], *reinterpret_cast<const float4*>(&As[k * BM + trow * TM + i]));
#pragma unroll
            for (int j = 0; j < TN; j += 4) put4(&rn[j], *reinterpret_cast<const float4*>(&Bs[k * BN + tcol * TN + j]));
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            store4(C, row0 + trow * TM + i, col0 + tcol * TN + j, M, N, vec_b,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
        }
    }
}
// end stage

// stage: conflict_free
// The transposed A tile's rows padded by PAD words: the two threads that stored into one bank
// (rows 4 words of k apart, BM words each) now land 4 * PAD banks apart.
template <typename T, int BM, int BN, int BK, int TM, int TN, int PAD>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
gemm_conflict_free(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K)
{
    constexpr int NT = BM * BN / (TM * TN);
    constexpr int LDA = BM + PAD;
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0 && PAD % 4 == 0, "float4 tiles");
    __shared__ __align__(16) float As[BK * LDA];
    __shared__ __align__(16) float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;
    float acc[TM][TN] = {{0.0f}};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = tid; i < BM * BK / 4; i += NT) {
            const int r = i / (BK / 4), c = i % (BK / 4) * 4;
            const float4 v = load4(A, row0 + r, k0 + c, M, K, vec_a);
            As[(c + 0) * LDA + r] = v.x;
            As[(c + 1) * LDA + r] = v.y;
            As[(c + 2) * LDA + r] = v.z;
            As[(c + 3) * LDA + r] = v.w;
        }
#pragma unroll
        for (int i = tid; i < BK * BN / 4; i += NT) {
            const int r = i / (BN / 4), c = i % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[r * BN + c]) = load4(B, k0 + r, col0 + c, K, N, vec_b);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) put4(&rm[i], *reinterpret_cast<const float4*>(&As[k * LDA + trow * TM + i]));
#pragma unroll
            for (int j = 0; j < TN; j += 4) put4(&rn[j], *reinterpret_cast<const float4*>(&Bs[k * BN + tcol * TN + j]));
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            store4(C, row0 + trow * TM + i, col0 + tcol * TN + j, M, N, vec_b,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
        }
    }
}
// end stage

// stage: warptile
// A warp owns a WM x WN sub-tile of the block's tile, computed in WMITER x WNITER steps of
// (8 x TM) x (4 x TN): a warp's shared loads of B are 4 consecutive float4s (no bank conflict)
// and of A 8 float4s, and each thread holds WMITER*TM x WNITER*TN results in registers. The
// next tile's global loads are issued before the current tile's FFMAs (register prefetch) into
// the second of two shared buffers: one barrier per tile. The shape is the template; the
// benchmark's shape sweep times the others.
template <typename T, int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT>
__global__ void __launch_bounds__(NT)
gemm_warptile(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K)
{
    constexpr int PAD = 4;
    constexpr int LDA = BM + PAD;
    constexpr int WMITER = WM * WN / (32 * TM * TN * WNITER);
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int LA = BM * BK / 4 / NT, LB = BK * BN / 4 / NT;
    static_assert((BM / WM) * (BN / WN) * 32 == NT, "one warp per WM x WN sub-tile");
    static_assert(WMITER >= 1 && (WSUBM / TM) * (WSUBN / TN) == 32, "a warp step is 32 threads' blocks");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 tiles");
    static_assert(LA * NT * 4 == BM * BK && LB * NT * 4 == BK * BN, "every thread loads whole vectors");
    __shared__ __align__(16) float As[2][BK * LDA];
    __shared__ __align__(16) float Bs[2][BK * BN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wrow = warp / (BN / WN), wcol = warp % (BN / WN);
    const int trow = lane / (WSUBN / TN), tcol = lane % (WSUBN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;
    float4 pa[LA], pb[LB];
    float acc[WMITER * TM][WNITER * TN] = {{0.0f}};
    float rm[WMITER * TM], rn[WNITER * TN];

    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int i = tid + l * NT;
            pa[l] = load4(A, row0 + i / (BK / 4), k0 + i % (BK / 4) * 4, M, K, vec_a);
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            const int i = tid + l * NT;
            pb[l] = load4(B, k0 + i / (BN / 4), col0 + i % (BN / 4) * 4, K, N, vec_b);
        }
    };
    auto stash = [&](int s) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            const int i = tid + l * NT;
            const int r = i / (BK / 4), c = i % (BK / 4) * 4;
            As[s][(c + 0) * LDA + r] = pa[l].x;
            As[s][(c + 1) * LDA + r] = pa[l].y;
            As[s][(c + 2) * LDA + r] = pa[l].z;
            As[s][(c + 3) * LDA + r] = pa[l].w;
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            const int i = tid + l * NT;
            *reinterpret_cast<float4*>(&Bs[s][i / (BN / 4) * BN + i % (BN / 4) * 4]) = pb[l];
        }
    };

    const int tiles = (K + BK - 1) / BK;
    fetch(0);
    stash(0);
    __syncthreads();
    for (int t = 0; t < tiles; ++t) {
        const int s = t & 1;
        if (t + 1 < tiles) fetch((t + 1) * BK);  // in flight during this tile's FFMAs
        const float* as = As[s];
        const float* bs = Bs[s];
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm) {
#pragma unroll
                for (int i = 0; i < TM; i += 4)
                    put4(&rm[wm * TM + i],
                         *reinterpret_cast<const float4*>(&as[k * LDA + wrow * WM + wm * WSUBM + trow * TM + i]));
            }
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn) {
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    put4(&rn[wn * TN + j],
                         *reinterpret_cast<const float4*>(&bs[k * BN + wcol * WN + wn * WSUBN + tcol * TN + j]));
            }
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i) {
#pragma unroll
                for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += rm[i] * rn[j];
            }
        }
        if (t + 1 < tiles) stash(s ^ 1);  // the other buffer: last read before the previous barrier
        __syncthreads();
    }
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm) {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int r = row0 + wrow * WM + wm * WSUBM + trow * TM + i;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn) {
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const int c = col0 + wcol * WN + wn * WSUBN + tcol * TN + j;
                    const float* a = &acc[wm * TM + i][wn * TN + j];
                    store4(C, r, c, M, N, vec_b, make_float4(a[0], a[1], a[2], a[3]));
                }
            }
        }
    }
}
// end stage
