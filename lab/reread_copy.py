"""A 16-byte copy that reads some sectors twice from L2, as vec_realigned's tiles do at the odd
shapes (the halo rows, the sector a row segment shares with the next tile), against the plain
copy and memcpy at the same size (GPU).

Usage: python3 lab/reread_copy.py OUT.json [MB]   (default 128 MB: 8192x8192 float16)
       ncu --clock-control none -k regex:copy_reread --metrics M,... \
         python3 lab/reread_copy.py OUT.json MB 1   (one launch of each variant, for ncu)
Variant k: one group of 8 threads in k also reads the first 16 bytes of the group 256 x 8 chunks on
(the next block's, read there too): 1 / (4k) more L2 read sectors than the copy moves (k = 1:
1.25x, k = 2: 1.125x, k = 4: 1.0625x); the result is checked bit for bit before it is timed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from profiler_report.live.gpu import event_times_us, import_cupy, memcpy_fn

SOURCE = r"""
template <int EVERY>
__global__ void __launch_bounds__(256) copy_reread(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n)
{
    const size_t stride = (size_t)gridDim.x * 256;
    for (size_t i = (size_t)blockIdx.x * 256 + threadIdx.x; i < n; i += stride) {
        uint4 v;
        asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(in + i));
        if (EVERY && threadIdx.x % 8 == 0 && (i / 8) % EVERY == 0 && i + 2048 < n) {
            uint4 x;
            asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w) : "l"(in + i + 2048));
            // Never true for the checked random input (a 128-bit coincidence), but not provably so.
            if (x.x == ~v.x && x.y == ~v.y && x.z == ~v.z && x.w == ~v.w) v.x ^= 1;
        }
        out[i] = v;
    }
}
template __global__ void copy_reread<0>(const uint4*, uint4*, size_t);
template __global__ void copy_reread<1>(const uint4*, uint4*, size_t);
template __global__ void copy_reread<2>(const uint4*, uint4*, size_t);
template __global__ void copy_reread<4>(const uint4*, uint4*, size_t);
"""
EVERY = (0, 1, 2, 4)


def main() -> None:
    out_path, mb = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 128
    once = len(sys.argv) > 3
    cupy = import_cupy()
    mod = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=[f"copy_reread<{k}>" for k in EVERY])
    nbytes = mb << 20
    n = nbytes // 16
    rng = cupy.random.default_rng(1)
    ins = [rng.integers(0, 1 << 32, size=nbytes // 4, dtype=cupy.uint32) for _ in range(3)]
    dst = cupy.empty_like(ins[0])
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    fns = {"memcpy": memcpy_fn(cupy)}
    for k in EVERY:
        ker = mod.get_function(f"copy_reread<{k}>")

        def fn(src: Any, d: Any, ker: Any = ker) -> None:
            ker((sms * 8,), (256,), (src, d, cupy.uint64(n)))
        fns[f"copy_reread<{k}>"] = fn
    for name, fn in fns.items():
        dst.fill(0xFFFFFFFF)
        fn(ins[0], dst)
        if not bool((dst == ins[0]).all()):
            print(f"{name:<18} WRONG (not timed)", flush=True)
            continue
        if once:
            continue
        us = event_times_us(fn, [(a, dst) for a in ins], repeats=50, warmup=5)
        med = us[len(us) // 2]
        rows.append({"name": name, "mb": mb, "median_us": med, "p10_us": us[len(us) // 10],
                     "p90_us": us[-len(us) // 10 - 1], "gbps": 2 * nbytes / med / 1e3})
        print(f"{name:<18} {med:8.1f} us {2 * nbytes / med / 1e3:7.0f} GB/s (exact)", flush=True)
    if rows:
        json.dump(rows, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
