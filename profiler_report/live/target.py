"""ncu target."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from profiler_report.cases.manifest import Stage, load_manifest
from profiler_report.live.gpu import _push_range, import_cupy, random_matrix
from profiler_report.live.kernels import Kernels, Validation, compile_module, validate

NVTX_PREFIX = "pr_"


def nvtx_range_name(stage_id: str) -> str:
    """NVTX push/pop range around a stage's profiled launch (the ``--nvtx-include`` filter)."""
    return f"{NVTX_PREFIX}{stage_id}"


def profile_launches(kernels: Kernels, stages: list[Stage], rows: int, cols: int) -> list[Validation]:
    """Target side of ncu: validate, warm up, then one launch per stage in its NVTX range."""
    cupy = import_cupy()
    results = [validate(kernels, st, rows, cols) for st in stages]
    a = random_matrix(cupy, rows, cols, kernels.dtype, seed=1)
    out = cupy.empty((cols, rows), dtype=kernels.dtype)  # a copy writes the same number of bytes
    for st, v in zip(stages, results, strict=True):
        if not v.correct:
            continue
        kernels.launch(st, a, out, rows, cols)  # warm-up, outside every range
        cupy.cuda.runtime.deviceSynchronize()
        with _push_range(nvtx_range_name(st.id)):
            kernels.launch(st, a, out, rows, cols)
            cupy.cuda.runtime.deviceSynchronize()
    return results


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m profiler_report.live.target",
                                description="ncu target: one profiled launch per stage")
    p.add_argument("mode", choices=["profile"])
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--cols", type=int, required=True)
    p.add_argument("--dtype", required=True)
    p.add_argument("--stages", required=True,
                   help="comma-separated stage ids; ID:OTHER launches stage OTHER's kernel under ID's range "
                        "(how the deliberately regressed fixture is recorded)")
    p.add_argument("--manifest", default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from pathlib import Path

    args = _parse(sys.argv[1:] if argv is None else argv)
    manifest = load_manifest(Path(args.manifest) if args.manifest else None)
    module, names = compile_module(manifest, args.dtype)
    kernels = Kernels(module, names, args.dtype, manifest.tile)
    stages = []
    for item in args.stages.split(","):
        label, _, kernel_of = item.partition(":")
        st = manifest.stage(kernel_of or label)
        stages.append(replace(st, id=label) if kernel_of else st)
    results = profile_launches(kernels, stages, args.rows, args.cols)
    bad = [v for v in results if not v.correct]
    for v in bad:
        print(f"profiler-report: {v.message}", file=sys.stderr)
    print("profiler-report-validation " + " ".join(f"{v.stage}={'ok' if v.correct else 'WRONG'}" for v in results))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
