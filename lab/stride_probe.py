"""vec_realigned's float16 output pattern without the transpose: whole-sector row segments at an
output row stride S, written by 64-row tiles in three block orders (GPU).

Usage: python3 lab/stride_probe.py OUT.json
A block of 256 threads owns one tile: 64 output rows x one SEG-byte segment of each, its bounds
rounded up to 32-byte sectors (each sector written once, as vec_realigned's tiles own theirs:
SEG 256 is the float16 [16,8,256] tile, 512 the [32,8,256] one). With READ the block first reads
as many bytes as it writes, contiguously (the input side, whose stride did not matter in
stride_sweep_run1), and stores them; without, it stores a constant (write-only). Orders: 0 the
kernel's (consecutive blocks take consecutive segments of the same 64 rows), 1 consecutive row
groups of the same segment, 2 diagonal (segment t % nseg of row group (t / nseg + t % nseg) % nrg).
This is a timing probe, not a transpose: the write-only output is checked against its pattern
(every sector written once, with its own value), the copying one is timed only. About 128 MB
written at every S; % of the same-size memcpy (READ) or memset (write-only), 20 repeats.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from profiler_report.live.gpu import event_times_us, import_cupy, memcpy_fn

SOURCE = r"""
template <int SEG, bool READ>
__global__ void __launch_bounds__(256) seg_probe(const uint4* __restrict__ in, char* __restrict__ out,
                                                 long long rows, long long S, int order, unsigned nrg, unsigned nseg,
                                                 long long in_chunks)
{
    constexpr int RD = SEG / 64;  // 16-byte reads per thread: the bytes a 64 x SEG tile writes
    const unsigned t = blockIdx.x;
    unsigned rg, si;
    if (order == 0) si = t % nseg, rg = t / nseg;
    else if (order == 1) rg = t % nrg, si = t / nrg;
    else si = t % nseg, rg = (t / nseg + si) % nrg;
    uint4 v[RD];
    const long long base = ((long long)t * 256 * RD) % in_chunks;
#pragma unroll
    for (int j = 0; j < RD; ++j) {
        if (READ) {
            asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w)
                         : "l"(in + base + threadIdx.x + 256 * j));
        } else {
            v[j] = make_uint4(0x9e3779b9u, 0x7f4a7c15u, 0x85ebca6bu, 0u);
        }
    }
    const unsigned lane = threadIdx.x % 32, g = lane % 8, jl = lane / 8;
    const long long gr = (long long)rg * 64 + (threadIdx.x / 32) * 8 + g;
    if (gr >= rows) return;
    long long a = gr * S + (long long)si * SEG;
    long long e = si + 1 == nseg ? (gr + 1) * S : a + SEG;
    a = (a + 31) & ~31LL, e = (e + 31) & ~31LL;
#pragma unroll
    for (int q = 0; q < SEG / 64 + 1; ++q) {
        const long long p = a + 16 * jl + 64 * q;
        if (p < e) {
            uint4 x = v[q % RD];
            x.w ^= (unsigned)(p >> 4);
            *reinterpret_cast<uint4*>(out + p) = x;
        }
    }
}
#define ARGS const uint4*, char*, long long, long long, int, unsigned, unsigned, long long
template __global__ void seg_probe<256, false>(ARGS);
template __global__ void seg_probe<256, true>(ARGS);
template __global__ void seg_probe<512, false>(ARGS);
template __global__ void seg_probe<512, true>(ARGS);
"""
STRIDES = (16382, 16384, 16386, 16390, 16400, 16418, 16350, 16898, 18002, 8194, 8706, 24690)
TOTAL = 128 << 20


def names() -> list[str]:
    return [f"seg_probe<{seg}, {'true' if rd else 'false'}>" for seg in (256, 512) for rd in (False, True)]


def expected_write_only(cupy: Any, nbytes: int) -> Any:
    """The write-only probe's output as uint32 words: the constant, its last word XORed with the
    chunk index (every 16-byte chunk of the covered bytes is some tile's)."""
    n = (nbytes + 31) // 32 * 2
    w = cupy.empty((n, 4), dtype=cupy.uint32)
    w[:, 0], w[:, 1], w[:, 2] = 0x9E3779B9, 0x7F4A7C15, 0x85EBCA6B
    w[:, 3] = cupy.arange(n, dtype=cupy.uint32)
    return w


def time_us(fn: Any, pairs: list, repeats: int = 20) -> float:
    us = event_times_us(fn, pairs, repeats=repeats, warmup=3)
    return us[len(us) // 2]


def launcher(cupy: Any, mod: Any, seg: int, rd: bool, order: int, rows: int, s: int) -> Any:
    """``fn(src, dst)`` launching one probe: every tile of ``rows`` output rows ``s`` bytes apart."""
    ker = mod.get_function(f"seg_probe<{seg}, {'true' if rd else 'false'}>")
    nrg, nseg = (rows + 63) // 64, (s + seg - 1) // seg
    in_chunks = TOTAL // 16 // (4 * seg) * (4 * seg)
    args = (cupy.int64(rows), cupy.int64(s), cupy.int32(order), cupy.uint32(nrg), cupy.uint32(nseg),
            cupy.int64(in_chunks))

    def fn(a: Any, d: Any) -> None:
        ker((nrg * nseg,), (256,), (a, d, *args))
    return fn


def references(cupy: Any, pairs: list, nbytes: int) -> tuple[float, float]:
    """Median microseconds of memcpy and of memset over ``nbytes``."""
    memcpy = memcpy_fn(cupy)
    mc = time_us(lambda a, d: memcpy(a[: nbytes // 4], d[: nbytes // 4 * 4].view(cupy.uint32)), pairs)
    ms = time_us(lambda a, d: cupy.cuda.runtime.memsetAsync(d.data.ptr, 0, nbytes,
                                                            cupy.cuda.get_current_stream().ptr), pairs)
    return mc, ms


def main() -> None:
    out_path = sys.argv[1]
    cupy = import_cupy()
    mod = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names())
    rng = cupy.random.default_rng(1)
    src = [rng.integers(0, 1 << 32, size=TOTAL // 4 + 64, dtype=cupy.uint32) for _ in range(2)]
    results = []
    for s in STRIDES:
        rows = TOTAL // s
        nbytes = rows * s
        dst = cupy.empty(nbytes + 64, dtype=cupy.uint8)
        pairs = [(a, dst) for a in src]
        mc, ms = references(cupy, pairs, nbytes)
        print(f"S={s} rows={rows}: memcpy {2 * nbytes / mc / 1e3:.0f} GB/s, memset {nbytes / ms / 1e3:.0f} GB/s",
              flush=True)
        for seg in (256, 512):
            for rd in (False, True):
                for order in (0, 1, 2):
                    fn = launcher(cupy, mod, seg, rd, order, rows, s)
                    note = ""
                    if not rd:
                        dst.fill(0)
                        fn(src[0], dst)
                        got = dst[: (nbytes + 31) // 32 * 32].view(cupy.uint32).reshape(-1, 4)
                        note = "exact" if bool((got == expected_write_only(cupy, nbytes)).all()) else "WRONG"
                    us = time_us(fn, pairs)
                    gbps = (2 if rd else 1) * nbytes / us / 1e3
                    pct = 100 * (mc if rd else ms) / us
                    kind = "copy" if rd else "write"
                    results.append({"stride": s, "rows": rows, "seg": seg, "kind": kind, "order": order, "us": us,
                                    "gbps": gbps, "pct_of_ref": pct, "memcpy_us": mc, "memset_us": ms, "note": note})
                    print(f"    seg {seg} {kind:<5} order {order}: {us:7.1f} us {gbps:6.0f} GB/s {pct:5.1f}% {note}",
                          flush=True)
        json.dump(results, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
