"""Launch vec_realigned once per (configuration, shape, dtype, odd path) for `ncu` (GPU)."""

from __future__ import annotations

from profiler_report.cases import get_case
from profiler_report.cases.manifest import Stage
from profiler_report.live.gpu import import_cupy
from profiler_report.live.kernels import Kernels, compile_module

#: (configuration, rows, cols, dtype, NVRTC options)
RUNS = (((32, 16, 512), 8191, 8193, "float32", ()),
        ((32, 16, 512), 8191, 8193, "float32", ("-DREALIGNED_ODD=0",)),
        ((32, 32, 512), 8191, 8193, "float32", ()),
        ((32, 16, 512), 8192, 8192, "float32", ()),
        ((32, 16, 512), 4097, 8191, "float16", ()),
        ((32, 16, 512), 4097, 8191, "float16", ("-DREALIGNED_ODD=0",)),
        ((32, 16, 512), 12345, 6789, "float16", ()),
        ((32, 16, 512), 8192, 8192, "float16", ()),
        ((32, 16, 512), 16384, 16384, "float64", ()))


def realigned(trc: int, tcc: int, nt: int) -> Stage:
    return Stage(f"vec_realigned [{trc},{tcc},{nt}]", "transpose_vec_realigned", "realigned",
                 launch="vec_realigned", targs=(str(trc), str(tcc), str(nt)))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for cfg, r, c, dtype, opts in RUNS:
        st = realigned(*cfg)
        module, names = compile_module(case, dtype, opts, extra=(st,))
        k = Kernels(module, names, dtype, case)
        a = case.make_input(cupy, {"rows": r, "cols": c}, dtype, seed=1)
        out = cupy.empty((c, r), dtype=dtype)
        k.launch(st, a, out, {"rows": r, "cols": c})
        cupy.cuda.runtime.deviceSynchronize()


if __name__ == "__main__":
    main()
