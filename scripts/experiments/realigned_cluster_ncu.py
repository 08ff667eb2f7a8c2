"""Launch vec_realigned once per (configuration, shape, dtype) with and without clusters, for `ncu`
(GPU): ncu --clock-control none -k regex:transpose_vec_realigned --metrics ... python3
scripts/experiments/realigned_cluster_ncu.py"""

from __future__ import annotations

from realigned import realigned  # run from the repo root: this folder is sys.path[0]
from realigned_ncu import launch_once

from profiler_report.cases import get_case
from profiler_report.live.gpu import import_cupy

#: (configuration, rows, cols, dtype)
RUNS = (((32, 16, 512, 1, 1), 8191, 8193, "float32"),
        ((32, 16, 512, 1, 4), 8191, 8193, "float32"),
        ((32, 16, 512, 1, 1), 8192, 8192, "float32"),
        ((16, 8, 256, 1, 1), 8191, 8193, "float16"),
        ((16, 8, 256, 1, 4), 8191, 8193, "float16"),
        ((32, 32, 512, 1, 1), 8191, 8193, "float64"),
        ((32, 32, 512, 1, 4), 8191, 8193, "float64"))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for cfg, r, c, dtype in RUNS:
        launch_once(cupy, case, realigned(*cfg), r, c, dtype)


if __name__ == "__main__":
    main()
