"""Launch a few transpose kernels once each, for `ncu` (GPU): python3 realigned_ncu.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from profiler_report.live.gpu import import_cupy
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.manifest import Stage
from profiler_report.model.registry import get_case

REALIGNED = Stage("vec_realigned", "transpose_vec_realigned", "realigned", launch="vec_realigned")
#: (stage id, configuration, rows, cols, dtype)
RUNS = (("vec_realigned", (32, 16, 512), 8192, 8192, "float32"),
        ("vec_realigned", (32, 16, 512), 8191, 8193, "float32"),
        ("vec_realigned", (32, 8, 256), 8191, 8193, "float16"),
        ("vec_realigned", (32, 16, 512), 16384, 16384, "float64"))


def launch_once(cupy: Any, case: Any, st: Stage, r: int, c: int, dtype: str, options: tuple[str, ...] = ()) -> None:
    """One launch of ``st`` at ``r`` x ``c`` (NVRTC ``options``), for ncu to profile."""
    module, names = compile_module(case, dtype, options, extra=(st,))
    k = Kernels(module, names, dtype, case)
    a = case.make_input(cupy, {"rows": r, "cols": c}, dtype, seed=1)
    out = cupy.empty((c, r), dtype=dtype)
    k.launch(st, a, out, {"rows": r, "cols": c})
    cupy.cuda.runtime.deviceSynchronize()


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for sid, cfg, r, c, dtype in RUNS:
        base = REALIGNED if sid == "vec_realigned" else next(s for s in case.manifest.stages if s.id == sid)
        launch_once(cupy, case, replace(base, targs=tuple(str(x) for x in cfg)), r, c, dtype)


if __name__ == "__main__":
    main()
