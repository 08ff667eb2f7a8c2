// Padding-sweep experiment for profiler-report (not a stage of the ladder).
//
// The `padded` stage with its three free choices as template parameters, so the bank model of
// profiler_report/cases/transpose/banks.py can be checked on hardware for each combination:
//   T    the element type (float: 4 bytes, double: 8 bytes)
//   PAD  elements added to each tile row: T tile[32][32 + PAD] (PAD = 0 is the `smem` stage)
//   BX   blockDim.x (32: one warp walks one tile row; 16: a warp spans two rows)
// A block has 256 threads, BX x (256 / BX); each thread copies 32 * 32 / 256 = 4 elements of the
// 32x32 tile in and 4 out. Row-major in, row-major out: out[c * rows + r] = in[r * cols + c].
// Every global access is bounds-checked; the barrier sits outside the checks.

#define SWEEP_TILE 32
#define SWEEP_THREADS 256

template <typename T, int PAD, int BX>
__global__ void transpose_pad_sweep(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    static_assert(SWEEP_TILE % BX == 0 && SWEEP_THREADS % BX == 0, "BX must divide the tile and the block");
    constexpr int BY = SWEEP_THREADS / BX;
    __shared__ T tile[SWEEP_TILE][SWEEP_TILE + PAD];
#pragma unroll 1
    for (int c = threadIdx.x; c < SWEEP_TILE; c += BX) {
#pragma unroll 1
        for (int r = threadIdx.y; r < SWEEP_TILE; r += BY) {
            const int x = blockIdx.x * SWEEP_TILE + c, y = blockIdx.y * SWEEP_TILE + r;
            if (x < cols && y < rows) {
                tile[r][c] = in[(size_t)y * cols + x];  // row store: tile[ty][tx]
            }
        }
    }
    __syncthreads();
#pragma unroll 1
    for (int c = threadIdx.x; c < SWEEP_TILE; c += BX) {
#pragma unroll 1
        for (int r = threadIdx.y; r < SWEEP_TILE; r += BY) {
            const int x = blockIdx.y * SWEEP_TILE + c, y = blockIdx.x * SWEEP_TILE + r;
            if (x < rows && y < cols) {
                out[(size_t)y * rows + x] = tile[c][r];  // column read: tile[tx][ty]
            }
        }
    }
}
