"""Launch vec_realigned once per (configuration, shape, dtype, odd path) for `ncu` (GPU)."""

from __future__ import annotations

from realigned_ncu import launch_once  # run from the repo root: this folder is sys.path[0]
from realigned_wide import realigned

from profiler_report.live.gpu import import_cupy
from profiler_report.model.registry import get_case

#: (configuration, rows, cols, dtype, NVRTC options); the recorded run (results/ncu_realigned_wide.csv)
#: had the odd path on for every tile, which is REALIGNED_ODD=2 now.
RUNS = (((32, 16, 512), 8191, 8193, "float32", ("-DREALIGNED_ODD=2",)),
        ((32, 16, 512), 8191, 8193, "float32", ("-DREALIGNED_ODD=0",)),
        ((32, 32, 512), 8191, 8193, "float32", ()),
        ((32, 16, 512), 8192, 8192, "float32", ()),
        ((32, 16, 512), 4097, 8191, "float16", ()),
        ((32, 16, 512), 4097, 8191, "float16", ("-DREALIGNED_ODD=0",)),
        ((32, 16, 512), 12345, 6789, "float16", ()),
        ((32, 16, 512), 8192, 8192, "float16", ()),
        ((32, 16, 512), 16384, 16384, "float64", ()))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for cfg, r, c, dtype, opts in RUNS:
        launch_once(cupy, case, realigned(*cfg), r, c, dtype, opts)


if __name__ == "__main__":
    main()
