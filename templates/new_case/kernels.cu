// Kernels of a profiler-report case (made by `profiler-report new-case`): y = 2 * x over n
// elements of type T. Each stage sits between `// stage: <id>` and `// end stage` lines, the ids
// of stages.toml; the report shows each stage as a diff from the stage before it, so keep one
// idea per stage. Every kernel takes (const T* x, T* y, long long n) and bounds-checks every
// access. NVRTC compiles this file as it is, with -lineinfo, for the GPU it runs on.

#define PER_THREAD 16  // elements per thread of stage `strided` (case.py says the same)

// A chunk of 16 bytes of T: one load or store instruction moves it.
template <typename T>
struct alignas(16) Chunk {
    T v[16 / sizeof(T)];
};

// stage: copy
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, long long n)
{
    // The ceiling moves as many bytes per access as the best stage (16): a 4-byte copy keeps too
    // few bytes in flight to reach the DRAM bandwidth, and a 16-byte stage would outrun it.
    constexpr int V = 16 / sizeof(T);
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long i = c * V;
    if (i + V <= n) {
        reinterpret_cast<Chunk<T>*>(y)[c] = reinterpret_cast<const Chunk<T>*>(x)[c];
    } else {
        for (long long k = i; k < n; ++k) {  // the tail: n not a multiple of V
            y[k] = x[k];
        }
    }
}
// end stage

// stage: strided
template <typename T>
__global__ void scale_strided(const T* __restrict__ x, T* __restrict__ y, long long n)
{
    // Thread t owns PER_THREAD consecutive elements: neighbouring threads are PER_THREAD apart.
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
#pragma unroll 1
    for (int j = 0; j < PER_THREAD; ++j) {
        const long long i = first + j;
        if (i < n) {
            y[i] = x[i] * T(2);
        }
    }
}
// end stage

// stage: coalesced
template <typename T>
__global__ void scale_coalesced(const T* __restrict__ x, T* __restrict__ y, long long n)
{
    // Thread t takes element t: a warp reads 32 neighbouring elements, whole sectors.
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i] * T(2);
    }
}
// end stage

// stage: vector
template <typename T>
__global__ void scale_vector(const T* __restrict__ x, T* __restrict__ y, long long n)
{
    // Thread t moves chunk t: 16 / sizeof(T) elements with one 16-byte load and one store.
    constexpr int V = 16 / sizeof(T);
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long i = c * V;
    if (i + V <= n) {
        Chunk<T> a = reinterpret_cast<const Chunk<T>*>(x)[c];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            a.v[k] *= T(2);
        }
        reinterpret_cast<Chunk<T>*>(y)[c] = a;
    } else {
        for (long long k = i; k < n; ++k) {  // the tail: n not a multiple of V
            y[k] = x[k] * T(2);
        }
    }
}
// end stage
