// Deliberately broken transposes for the compute-sanitizer tests (tests/test_sanitizer_gpu.py).
// Same contract and launch as kernels/transpose/transpose.cu: `rows x cols` row-major in,
// `cols x rows` row-major out, block (32, 8), grid (ceil(cols / 32), ceil(rows / 32)).

#define TILE 32
#define BLOCK_ROWS 8

// stage: copy
template <typename T>
__global__ void copy_tiled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            out[(size_t)(y + j) * cols + x] = in[(size_t)(y + j) * cols + x];
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
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage

// stage: nosync
template <typename T>
__global__ void transpose_nosync(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    // BUG: no __syncthreads() here; the column read below races with other warps' writes.
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage

// stage: barrier_in_bounds
template <typename T>
__global__ void transpose_barrier_in_bounds(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) {
        for (int j = 0; j < TILE; j += BLOCK_ROWS) {
            if (y + j < rows) {
                tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
            }
        }
        __syncthreads();  // BUG: inside the bounds check; edge-tile threads that fail it skip the barrier
    }
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// end stage
