// Histogram of n bytes into 256 bins: a profiler-report case folder (made with
// `profiler-report new-case examples/histogram --name histogram`, then edited).
//
// Every histogram kernel takes (const T* x, unsigned int* bins, long long n) with T = unsigned
// char, adds its counts to `bins` (which the case zeroes before a validated or profiled launch)
// and walks the input with a grid-stride loop: the grid is HIST_BLOCKS blocks of HIST_THREADS
// threads, whatever n is. The copy ceiling moves the same bytes with 16-byte accesses.

#define BINS 256
#define HIST_THREADS 256                // threads per block of every histogram stage (case.py agrees)
#define WARPS (HIST_THREADS / 32)

// stage: copy
template <typename T>
__global__ void copy_bytes(const T* __restrict__ x, T* __restrict__ y, long long n)
{
    // One 16-byte chunk per thread; the last thread copies the tail byte by byte.
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long i = c * 16;
    if (i + 16 <= n) {
        reinterpret_cast<uint4*>(y)[c] = reinterpret_cast<const uint4*>(x)[c];
    } else {
        for (long long k = i; k < n; ++k) {
            y[k] = x[k];
        }
    }
}
// end stage

// stage: global_atomics
template <typename T>
__global__ void hist_global(const T* __restrict__ x, unsigned int* __restrict__ bins, long long n)
{
    // Every element is one atomic add on one of 256 words in global memory (done in L2).
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&bins[x[i]], 1u);
    }
}
// end stage

// stage: shared_atomics
template <typename T>
__global__ void hist_shared(const T* __restrict__ x, unsigned int* __restrict__ bins, long long n)
{
    // One private histogram per block in shared memory; 256 global atomics per block at the end.
    __shared__ unsigned int h[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        h[b] = 0;
    }
    __syncthreads();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&h[x[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        if (h[b]) {
            atomicAdd(&bins[b], h[b]);
        }
    }
}
// end stage

// stage: warp_private
template <typename T>
__global__ void hist_warp(const T* __restrict__ x, unsigned int* __restrict__ bins, long long n)
{
    // One private histogram per warp: the warps of a block no longer collide on a bin.
    __shared__ unsigned int h[WARPS][BINS];
    for (int b = threadIdx.x; b < WARPS * BINS; b += blockDim.x) {
        (&h[0][0])[b] = 0;
    }
    __syncthreads();
    unsigned int* mine = h[threadIdx.x / 32];
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&mine[x[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int sum = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            sum += h[w][b];
        }
        if (sum) {
            atomicAdd(&bins[b], sum);
        }
    }
}
// end stage

// stage: warp_private_vec
template <typename T>
__global__ void hist_warp_vec(const T* __restrict__ x, unsigned int* __restrict__ bins, long long n)
{
    // As warp_private, but each thread loads 16 bytes at a time (one uint4) and counts all 16.
    __shared__ unsigned int h[WARPS][BINS];
    for (int b = threadIdx.x; b < WARPS * BINS; b += blockDim.x) {
        (&h[0][0])[b] = 0;
    }
    __syncthreads();
    unsigned int* mine = h[threadIdx.x / 32];
    const long long chunks = n / 16;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += stride) {
        const uint4 v = reinterpret_cast<const uint4*>(x)[c];
        const unsigned int words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int w = 0; w < 4; ++w) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                atomicAdd(&mine[(words[w] >> (8 * k)) & 0xFF], 1u);
            }
        }
    }
    if (blockIdx.x == 0) {  // the tail: n not a multiple of 16
        for (long long i = chunks * 16 + threadIdx.x; i < n; i += blockDim.x) {
            atomicAdd(&mine[x[i]], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int sum = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            sum += h[w][b];
        }
        if (sum) {
            atomicAdd(&bins[b], sum);
        }
    }
}
// end stage
