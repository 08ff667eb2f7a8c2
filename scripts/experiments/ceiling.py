"""Experiment (H200, 2026-11-30): what closes the last few percent between vec_colwalk and memcpy.

Times, in one process with CUDA events (median of 30, 3 buffer pairs rotated, every output checked
bit for bit first), at the four headline sizes of issue 5:
- copy kernels at 4, 8 and 16 bytes per access, 1 or 4 accesses in flight per thread;
- tp_vec: vec_colwalk with DEPTH 1/2/4 micro-rows per warp and GROUP 1/2/4/8 tile columns
  walking down together (block raster order);
- tp_vec_persist: the same as a persistent kernel that issues the next tile's loads before
  the current tile's stores;
- tp_bulk: Hopper cp.async.bulk row copies into shared memory, STAGES tiles ahead, mbarriers;
- tp_gen: vec_colwalk with the tile shape (micro-block rows and columns) and threads per block
  as parameters (the block-shape sweep);
- the vec_colwalk stage and the fastest peers (torch.compile, Triton).
Also saves the Triton code torch.compile generates for ``x.t().contiguous()``.

Run on a GPU from the repository root:
    PYTHONPATH=$PWD python3 scripts/experiments/ceiling.py OUTDIR [KINDS]
KINDS: comma-separated subset of copy,gen,vec,persist,bulk,inductor (default: all but inductor; gentune: tuned tp_gen).
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
from pathlib import Path

import cupy
import numpy as np
from profiler_report.live.bench import check_output, event_time, peers

from profiler_report import run as gpu
from profiler_report.model.manifest import load_manifest
from profiler_report.util.dtypes import CXX_TYPES, ITEMSIZE

HERE = Path(__file__).parent
CASES = [("float32", 8192, 8192), ("float32", 16384, 16384), ("float64", 8192, 4096), ("float16", 8192, 16384)]
SMEM_PER_SM = 233472  # H200: 228 KB per SM, 1 KB of it reserved per block
MAX_SMEM_BLOCK = 232448


#: tp_gen tile shapes: (micro-block rows TRC, micro-block columns TCC, threads per block NT).
GEN_SHAPES = ((8, 32, 256), (16, 32, 256), (32, 32, 256), (16, 16, 256), (32, 16, 256), (16, 64, 256),
              (8, 64, 256), (32, 32, 512), (16, 32, 512), (32, 16, 512), (16, 64, 512), (64, 16, 512),
              (16, 16, 128), (32, 8, 256), (8, 16, 128), (64, 32, 512), (32, 64, 512), (8, 8, 64))


#: tp_gen with __launch_bounds__ minimum blocks per SM and the L2::256B load hint.
GEN_TUNED = ((16, 16, 256, 8, False), (16, 16, 256, 6, False), (16, 16, 128, 16, False), (16, 16, 256, 8, True),
             (16, 16, 256, 1, True), (16, 32, 256, 4, False), (16, 32, 256, 6, False), (32, 16, 256, 6, False),
             (32, 16, 512, 4, False), (8, 16, 128, 16, False), (16, 8, 128, 16, False), (16, 32, 512, 3, False))


def bulk_smem(dtype: str, outch: int, stages: int) -> int:
    v = 16 // ITEMSIZE[dtype]
    return (outch * v * 32 + outch) * 16 * stages


def kernel_table(dtype: str) -> list[tuple[str, str, dict]]:
    """(label, name expression, launch info) of every variant for one dtype."""
    t = CXX_TYPES[dtype]
    out = []
    for w, wt in ((4, "unsigned int"), (8, "uint2"), (16, "uint4")):
        for u in (1, 2, 4):
            out.append((f"copy {w}B x{u}", f"copy_w<{wt},{u}>", {"kind": "copy", "w": w, "u": u}))
    v = 16 // ITEMSIZE[dtype]
    for trc, tcc, nt in GEN_SHAPES:
        smem = trc * tcc * v * 16
        if smem <= MAX_SMEM_BLOCK:
            out.append((f"tp_gen r{trc} c{tcc} t{nt}", f"tp_gen<{t},{trc},{tcc},{nt}>",
                        {"kind": "gen", "trc": trc, "tcc": tcc, "nt": nt, "smem": smem}))
    for (trc, tcc, nt), cap in itertools.product(((16, 16, 256), (16, 32, 256), (16, 16, 128)), (2, 3, 4, 6)):
        need = trc * tcc * v * 16
        smem = max(need, SMEM_PER_SM // cap - 1024 - 128)
        out.append((f"tp_gen r{trc} c{tcc} t{nt} cap{cap}", f"tp_gen<{t},{trc},{tcc},{nt}>",
                    {"kind": "occ", "trc": trc, "tcc": tcc, "nt": nt, "smem": smem}))
    for cap in (4, 8, 16):
        out.append((f"copy 16B x4 cap{cap}", "copy_w<uint4,4>",
                    {"kind": "occ", "copy": True, "w": 16, "u": 4, "smem": SMEM_PER_SM // cap - 1024 - 128}))
    for trc, tcc, nt, minb, pf in GEN_TUNED:
        out.append((f"tp_gen r{trc} c{tcc} t{nt} min{minb}{' pf256' if pf else ''}",
                    f"tp_gen<{t},{trc},{tcc},{nt},{minb},{'true' if pf else 'false'}>",
                    {"kind": "gentune", "trc": trc, "tcc": tcc, "nt": nt, "smem": trc * tcc * v * 16}))
    for depth, group in itertools.product((1, 2, 4), (1, 2, 4, 8)):
        out.append((f"tp_vec d{depth} g{group}", f"tp_vec<{t},{depth},{group}>",
                    {"kind": "vec", "depth": depth}))
    for group, per_sm in itertools.product((1, 4), (2, 4)):
        out.append((f"tp_vec_persist d2 g{group} x{per_sm}", f"tp_vec_persist<{t},2,{group}>",
                    {"kind": "persist", "depth": 2, "per_sm": per_sm}))
    for outch, stages, group in itertools.product((16, 32), (2, 3, 4), (1, 4)):
        smem = bulk_smem(dtype, outch, stages)
        if smem > MAX_SMEM_BLOCK:
            continue
        for per_sm in (1, 2):
            if per_sm * (smem + 1024) > SMEM_PER_SM:
                continue
            out.append((f"tp_bulk o{outch} s{stages} g{group} x{per_sm}", f"tp_bulk<{t},{outch},{stages},{group}>",
                        {"kind": "bulk", "outch": outch, "stages": stages, "per_sm": per_sm, "smem": smem}))
    return out


def launcher(fn, info: dict, dtype: str, rows: int, cols: int, sms: int):
    v = 16 // ITEMSIZE[dtype]
    r, c = np.int32(rows), np.int32(cols)
    if info["kind"] == "copy" or info.get("copy"):
        n = rows * cols * ITEMSIZE[dtype] // info["w"]
        grid = (n + 256 * info["u"] - 1) // (256 * info["u"])
        smem = info.get("smem", 0)  # only to cap the resident blocks per SM
        if smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = smem
        return lambda s, o: fn((grid,), (256,), (s, o, np.uint64(n)), shared_mem=smem)
    if info["kind"] in ("vec", "persist"):
        d = info["depth"]
        smem = 32 * v * 8 * d * 16
        if smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = smem
        ntiles = (rows // (8 * v * d)) * (cols // (32 * v))
        grid = ntiles if info["kind"] == "vec" else min(ntiles, sms * info["per_sm"])
        return lambda s, o: fn((grid,), (256,), (s, o, r, c), shared_mem=smem)
    if info["kind"] in ("gen", "gentune", "occ"):
        smem = info["smem"]
        if smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = smem
        grid = -(-rows // (info["trc"] * v)) * -(-cols // (info["tcc"] * v))
        return lambda s, o: fn((grid,), (info["nt"],), (s, o, r, c), shared_mem=smem)
    smem = info["smem"]
    fn.max_dynamic_shared_size_bytes = smem
    ntiles = (rows // (info["outch"] * v)) * (cols // (32 * v))
    grid = min(ntiles, sms * info["per_sm"])
    return lambda s, o: fn((grid,), (256,), (s, o, r, c), shared_mem=smem)


def inductor_code(outdir: Path) -> None:
    import torch
    from torch._inductor.utils import run_and_get_code

    for dtype, rows, cols in CASES:
        x = torch.randn(rows, cols, device="cuda").to(getattr(torch, dtype))
        torch._dynamo.reset()
        _, codes = run_and_get_code(torch.compile(lambda a: a.t().contiguous()), x)
        (outdir / f"inductor_{dtype}_{rows}x{cols}.py").write_text("\n\n".join(codes))


def run_case(results: list[dict], src: str, manifest, dtype: str, rows: int, cols: int, sms: int,
             bulk_pass: bool, kinds: set[str]) -> None:
    table = [t for t in kernel_table(dtype) if (t[2]["kind"] == "bulk") == bulk_pass and t[2]["kind"] in kinds]
    mod = cupy.RawModule(code=src, options=("-std=c++17",), name_expressions=[e for _, e, _ in table])
    smod, snames = gpu.compile_module(manifest, dtype)
    k = gpu.Kernels(smod, snames, dtype, manifest.tile)
    pairs = gpu.make_pairs(cupy, rows, cols, dtype, 3)
    entries = [("memcpy", gpu.memcpy_fn(cupy), True)]
    if not bulk_pass:
        st = manifest.stage("vec_colwalk")
        entries.append(("stage vec_colwalk", lambda s, o, st=st: k.launch(st, s, o, rows, cols), False))
        for name, (fn, _note) in peers(cupy, dtype).items():
            if fn is not None and ("compile" in name or "triton" in name):
                entries.append((name, fn, False))
    for label, expr, info in table:
        is_copy = info["kind"] == "copy" or info.get("copy", False)
        entries.append((label, launcher(mod.get_function(expr), info, dtype, rows, cols, sms), is_copy))
    base = None
    for label, fn, is_copy in entries:
        try:
            bad = check_output(cupy, label, fn, pairs, copy=is_copy)
            us = [float("nan")] if bad else event_time(cupy, fn, pairs, 30, 5)
        except Exception as exc:  # an experiment failing to launch is a result too
            bad, us = f"{type(exc).__name__}: {str(exc)[:120]}", [float("nan")]
        med = statistics.median(us)
        gbps = 2 * rows * cols * ITEMSIZE[dtype] / (med * 1e3)
        base = base or gbps
        results.append({"dtype": dtype, "rows": rows, "cols": cols, "name": label, "median_us": med,
                        "gbps": gbps, "pct_of_memcpy": 100 * gbps / base, "note": bad})
        print(f"{dtype} {rows}x{cols} {label:34} {med:9.1f} us {gbps:7.0f} GB/s {100 * gbps / base:6.1f}% {bad}",
              flush=True)
    del pairs
    cupy.get_default_memory_pool().free_all_blocks()


def main() -> None:
    outdir = Path(sys.argv[1])
    kinds = set((sys.argv[2] if len(sys.argv) > 2 else "copy,gen,vec,persist,bulk").split(","))
    outdir.mkdir(parents=True, exist_ok=True)
    sms = gpu.device_info()["sm_count"]
    manifest = load_manifest()
    results: list[dict] = []
    src = (HERE / "ceiling_variants.cu").read_text()
    # Bulk-copy kernels last, in a second pass: a trapped barrier wait poisons the CUDA context.
    for bulk_pass in (False, True):
        for dtype, rows, cols in CASES:
            run_case(results, src, manifest, dtype, rows, cols, sms, bulk_pass, kinds)
    (outdir / "ceiling.json").write_text(json.dumps(results, indent=1))
    try:
        if "inductor" in kinds:
            inductor_code(outdir)
    except Exception as exc:  # the timing results matter more than the code dump
        print(f"inductor code dump failed: {exc}", flush=True)


if __name__ == "__main__":
    main()
