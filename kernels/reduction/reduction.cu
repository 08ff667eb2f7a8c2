// Reduction stages for profiler-report: the sum of n elements of T (float or int).
//
// After M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007): seven kernels, each
// one idea, then two past it (16-byte loads, a one-pass finish). Every kernel reads `in[0, n)`
// and writes one partial sum per block to `out[blockIdx.x]`; the host launches the same kernel
// again on the partials until one value is left (Harris's "recursive kernel invocation"). The
// one-pass stage finishes in the last block instead. Any n >= 1 works: every global read is
// bounds-checked and every __syncthreads() sits outside the checks.
//
// Launch (profiler_report/cases/reduction): stages 1-3 one element per thread, grid
// ceil(n / threads); stages 4-6 two elements per thread, grid ceil(n / (2 * threads)); stages
// 7-9 a fixed grid (blocks per SM x SMs, fewer when n is small) that strides over the input.
// Stages 1-5 take the block size at run time; from stage 6 on it is the template parameter
// BLOCK. Dynamic shared memory: threads * sizeof(T).
//
// int sums wrap modulo 2^32 in every order, so int32 results are bit-exact; float sums differ
// with the summation order, within the bound the case states.
//
// Each stage sits between `// stage: <id>` and `// end stage` markers; the report shows the
// source diff from one stage to the next.

template <typename T> struct Vec4;
template <> struct Vec4<float> { typedef float4 type; };
template <> struct Vec4<int> { typedef int4 type; };

// Dynamic shared memory shared by every instantiation: one extern array of bytes, cast per T.
template <typename T>
__device__ __forceinline__ T* shared_array()
{
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    return reinterpret_cast<T*>(smem_bytes);
}

// stage: read_ceiling
// Bandwidth ceiling, not a stage: the fewest instructions that read every byte, LOADS 16-byte
// loads in flight per thread, and keep the result live (an XOR of all 32-bit words, one
// atomicXor per warp into out[0], zeroed before the launch).
template <typename T, unsigned int BLOCK, unsigned int LOADS>
__global__ void read_ceiling(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    const unsigned int* words = reinterpret_cast<const unsigned int*>(in);
    const unsigned int nwords = n * sizeof(T) / 4;
    const uint4* v = reinterpret_cast<const uint4*>(words);
    const unsigned int nvec = nwords / 4;
    const unsigned int stride = BLOCK * LOADS * gridDim.x;
    unsigned int x = 0;
    for (unsigned int base = blockIdx.x * (BLOCK * LOADS) + threadIdx.x; base < nvec; base += stride) {
        uint4 q[LOADS];
#pragma unroll
        for (unsigned int k = 0; k < LOADS; ++k) {
            const unsigned int i = base + k * BLOCK;
            q[k] = i < nvec ? v[i] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (unsigned int k = 0; k < LOADS; ++k) {
            x ^= q[k].x ^ q[k].y ^ q[k].z ^ q[k].w;
        }
    }
    const unsigned int tail = nvec * 4 + blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x == 0 && tail < nwords) {
        x ^= words[tail];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        x ^= __shfl_down_sync(0xffffffffu, x, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicXor(reinterpret_cast<unsigned int*>(out), x);
    }
}
// end stage

// stage: interleaved_divergent
template <typename T>
__global__ void reduce_interleaved_divergent(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        // Only every (2*s)-th thread adds: the warps diverge, and `%` is slow.
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// end stage

// stage: interleaved_strided
template <typename T>
__global__ void reduce_interleaved_strided(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        // Consecutive threads do the work (no divergence), but thread t touches word 2*s*t:
        // a stride of 2*s words, so the warp's accesses pile up in a few banks.
        const unsigned int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// end stage

// stage: sequential
template <typename T>
__global__ void reduce_sequential(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        // Thread t adds word t + s to word t: consecutive words, conflict-free.
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// end stage

// stage: first_add
template <typename T>
__global__ void reduce_first_add(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    // Half the blocks: each thread adds two elements, blockDim apart, as it loads them.
    const unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    T v = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) {
        v += in[i + blockDim.x];
    }
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// end stage

// stage: warp_shuffle
template <typename T>
__global__ void reduce_warp_shuffle(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    T v = i < n ? in[i] : T(0);
    if (i + blockDim.x < n) {
        v += in[i + blockDim.x];
    }
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    // The last 64 values: one warp, no barriers. Register shuffles replace Harris's 2007
    // `volatile` shared-memory warp code, which relied on lock-step warps (unsafe since Volta's
    // independent thread scheduling).
    if (tid < 32) {
        v = sdata[tid] + sdata[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (tid == 0) {
            out[blockIdx.x] = v;
        }
    }
}
// end stage

// stage: unrolled
template <typename T, unsigned int BLOCK>
__global__ void reduce_unrolled(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * (BLOCK * 2) + threadIdx.x;
    T v = i < n ? in[i] : T(0);
    if (i + BLOCK < n) {
        v += in[i + BLOCK];
    }
    sdata[tid] = v;
    __syncthreads();
    // The block size is a template parameter: every step below is resolved at compile time.
    if (BLOCK >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
    if (BLOCK >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) {
        v = sdata[tid] + sdata[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (tid == 0) {
            out[blockIdx.x] = v;
        }
    }
}
// end stage

// stage: grid_stride
template <typename T, unsigned int BLOCK>
__global__ void reduce_grid_stride(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    // A fixed grid: each thread accumulates many elements in a register, 2 * BLOCK * gridDim
    // apart, before the block's tree; the tree's cost is paid once per block, not per 2 * BLOCK.
    const unsigned int grid_size = BLOCK * 2 * gridDim.x;
    T v = T(0);
    for (unsigned int i = blockIdx.x * (BLOCK * 2) + threadIdx.x; i < n; i += grid_size) {
        v += in[i];
        if (i + BLOCK < n) {
            v += in[i + BLOCK];
        }
    }
    sdata[tid] = v;
    __syncthreads();
    if (BLOCK >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
    if (BLOCK >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) {
        v = sdata[tid] + sdata[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (tid == 0) {
            out[blockIdx.x] = v;
        }
    }
}
// end stage

// stage: vec4
template <typename T, unsigned int BLOCK>
__global__ void reduce_vec4(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    typedef typename Vec4<T>::type V;
    T* sdata = shared_array<T>();
    const unsigned int tid = threadIdx.x;
    // 16-byte loads: a quarter of the load instructions for the same bytes. The n % 4 elements
    // past the last whole vector are read one by one.
    const V* vin = reinterpret_cast<const V*>(in);
    const unsigned int nvec = n / 4;
    const unsigned int grid_size = BLOCK * 2 * gridDim.x;
    T v = T(0);
    for (unsigned int i = blockIdx.x * (BLOCK * 2) + threadIdx.x; i < nvec; i += grid_size) {
        const V a = vin[i];
        v += (a.x + a.y) + (a.z + a.w);
        if (i + BLOCK < nvec) {
            const V b = vin[i + BLOCK];
            v += (b.x + b.y) + (b.z + b.w);
        }
    }
    const unsigned int tail = nvec * 4 + blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x == 0 && tail < n) {
        v += in[tail];
    }
    sdata[tid] = v;
    __syncthreads();
    if (BLOCK >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
    if (BLOCK >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) {
        v = sdata[tid] + sdata[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (tid == 0) {
            out[blockIdx.x] = v;
        }
    }
}
// end stage

// stage: one_pass
template <typename T, unsigned int BLOCK>
__global__ void reduce_one_pass(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    typedef typename Vec4<T>::type V;
    T* sdata = shared_array<T>();
    __shared__ bool last_block;
    const unsigned int tid = threadIdx.x;
    const V* vin = reinterpret_cast<const V*>(in);
    const unsigned int nvec = n / 4;
    const unsigned int grid_size = BLOCK * 2 * gridDim.x;
    T v = T(0);
    for (unsigned int i = blockIdx.x * (BLOCK * 2) + threadIdx.x; i < nvec; i += grid_size) {
        const V a = vin[i];
        v += (a.x + a.y) + (a.z + a.w);
        if (i + BLOCK < nvec) {
            const V b = vin[i + BLOCK];
            v += (b.x + b.y) + (b.z + b.w);
        }
    }
    const unsigned int tail = nvec * 4 + blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x == 0 && tail < n) {
        v += in[tail];
    }
    // One launch instead of two: out[0] is the result, the word after it a ticket counter
    // (zeroed before the launch), the partials start at out[64]. Each block publishes its
    // partial, and the block that takes the last ticket sums the partials in block order
    // (the same order every run) and resets the ticket.
    T* partials = out + 64;
    unsigned int* ticket = reinterpret_cast<unsigned int*>(out + 1);
    for (unsigned int pass = 0; pass < 2; ++pass) {
        sdata[tid] = v;
        __syncthreads();
        if (BLOCK >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
        if (BLOCK >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
        if (BLOCK >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
        if (BLOCK >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
        if (tid < 32) {
            v = sdata[tid] + sdata[tid + 32];
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                v += __shfl_down_sync(0xffffffffu, v, offset);
            }
        }
        if (pass == 1) {
            if (tid == 0) {
                out[0] = v;
                *ticket = 0;
            }
            return;
        }
        if (tid == 0) {
            partials[blockIdx.x] = v;
            __threadfence();  // the partial is visible to every block before the ticket is taken
            last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
        }
        __syncthreads();
        if (!last_block) {
            return;
        }
        v = T(0);
        for (unsigned int b = tid; b < gridDim.x; b += BLOCK) {
            v += __ldcg(partials + b);  // L2, not a stale L1 line
        }
        __syncthreads();
    }
}
// end stage

// stage: one_pass_deep
template <typename T, unsigned int BLOCK, unsigned int LOADS>
__global__ void reduce_one_pass_deep(const T* __restrict__ in, T* __restrict__ out, unsigned int n)
{
    typedef typename Vec4<T>::type V;
    T* sdata = shared_array<T>();
    __shared__ bool last_block;
    const unsigned int tid = threadIdx.x;
    const V* vin = reinterpret_cast<const V*>(in);
    const unsigned int nvec = n / 4;
    // LOADS 16-byte loads issued back to back per thread and iteration (2 before): more bytes in
    // flight per SM to cover DRAM latency.
    const unsigned int grid_size = BLOCK * LOADS * gridDim.x;
    T v = T(0);
    for (unsigned int base = blockIdx.x * (BLOCK * LOADS) + threadIdx.x; base < nvec; base += grid_size) {
        V a[LOADS];
#pragma unroll
        for (unsigned int k = 0; k < LOADS; ++k) {
            const unsigned int i = base + k * BLOCK;
            a[k] = i < nvec ? vin[i] : V{T(0), T(0), T(0), T(0)};
        }
#pragma unroll
        for (unsigned int k = 0; k < LOADS; ++k) {
            v += (a[k].x + a[k].y) + (a[k].z + a[k].w);
        }
    }
    const unsigned int tail = nvec * 4 + blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x == 0 && tail < n) {
        v += in[tail];
    }
    // One launch instead of two: out[0] is the result, the word after it a ticket counter
    // (zeroed before the launch), the partials start at out[64]. Each block publishes its
    // partial, and the block that takes the last ticket sums the partials in block order
    // (the same order every run) and resets the ticket.
    T* partials = out + 64;
    unsigned int* ticket = reinterpret_cast<unsigned int*>(out + 1);
    for (unsigned int pass = 0; pass < 2; ++pass) {
        sdata[tid] = v;
        __syncthreads();
        if (BLOCK >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
        if (BLOCK >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
        if (BLOCK >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
        if (BLOCK >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
        if (tid < 32) {
            v = sdata[tid] + sdata[tid + 32];
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                v += __shfl_down_sync(0xffffffffu, v, offset);
            }
        }
        if (pass == 1) {
            if (tid == 0) {
                out[0] = v;
                *ticket = 0;
            }
            return;
        }
        if (tid == 0) {
            partials[blockIdx.x] = v;
            __threadfence();  // the partial is visible to every block before the ticket is taken
            last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
        }
        __syncthreads();
        if (!last_block) {
            return;
        }
        v = T(0);
        for (unsigned int b = tid; b < gridDim.x; b += BLOCK) {
            v += __ldcg(partials + b);  // L2, not a stale L1 line
        }
        __syncthreads();
    }
}
// end stage
