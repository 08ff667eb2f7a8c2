// Transpose kernels in the style of the CUDA samples (NVIDIA's "An Efficient Matrix Transpose in
// CUDA C/C++"): a plain copy (the reference), a naive transpose, a coalesced one through a shared
// 32x32 tile, and the same with the tile padded to 32x33 (no bank conflicts). Not the
// profiler-report kernels: the captures made from this file are "captures the tool did not make".
//
//   nvcc -O3 -lineinfo -arch=sm_90 -o transpose_samples transpose_samples.cu
//   ./transpose_samples N [KERNEL...]     (N x N floats; KERNEL: copy naive coalesced conflict_free)
//
// Each named kernel (default: all four) is launched once and its result checked; exit status 1
// when one is wrong.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void copy(float* odata, const float* idata, int n)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(size_t)(y + j) * n + x] = idata[(size_t)(y + j) * n + x];
}

__global__ void transposeNaive(float* odata, const float* idata, int n)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(size_t)x * n + (y + j)] = idata[(size_t)(y + j) * n + x];
}

__global__ void transposeCoalesced(float* odata, const float* idata, int n)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transposeNoBankConflicts(float* odata, const float* idata, int n)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

typedef void (*Kernel)(float*, const float*, int);

int main(int argc, char** argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n <= 0 || n % TILE_DIM) {
        fprintf(stderr, "N must be a positive multiple of %d\n", TILE_DIM);
        return 2;
    }
    const char* names[] = {"copy", "naive", "coalesced", "conflict_free"};
    Kernel kernels[] = {copy, transposeNaive, transposeCoalesced, transposeNoBankConflicts};
    const size_t count = (size_t)n * n, bytes = count * sizeof(float);
    std::vector<float> h(count), got(count);
    for (size_t i = 0; i < count; ++i) h[i] = (float)(i % 65521) + 1.0f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_out, bytes);
    cudaMemcpy(d_in, h.data(), bytes, cudaMemcpyHostToDevice);
    dim3 grid(n / TILE_DIM, n / TILE_DIM), block(TILE_DIM, BLOCK_ROWS);
    int wrong = 0;
    for (int k = 0; k < 4; ++k) {
        bool run = argc <= 2;
        for (int a = 2; a < argc; ++a) run = run || !strcmp(argv[a], names[k]);
        if (!run) continue;
        cudaMemset(d_out, 0xFF, bytes);
        kernels[k]<<<grid, block>>>(d_out, d_in, n);
        cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) {
            fprintf(stderr, "%s: %s\n", names[k], cudaGetErrorString(err));
            return 1;
        }
        cudaMemcpy(got.data(), d_out, bytes, cudaMemcpyDeviceToHost);
        size_t bad = 0;
        for (size_t r = 0; r < (size_t)n; ++r)
            for (size_t c = 0; c < (size_t)n; ++c)
                bad += got[r * n + c] != (k == 0 ? h[r * n + c] : h[c * n + r]);
        printf("%s %dx%d: %s\n", names[k], n, n, bad ? "WRONG" : "correct");
        wrong += bad != 0;
    }
    cudaFree(d_in);
    cudaFree(d_out);
    return wrong ? 1 : 0;
}
