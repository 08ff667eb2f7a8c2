"""Launch vec_realigned once per (configuration, shape, dtype) with one and four tiles per block, for
`ncu` (GPU): ncu --clock-control none --set full -k regex:transpose_vec_realigned -o R
python3 scripts/experiments/realigned_pipelined_ncu.py"""

from __future__ import annotations

from realigned import realigned  # run from the repo root: this folder is sys.path[0]
from realigned_ncu import launch_once

from profiler_report.live.gpu import import_cupy
from profiler_report.model.registry import get_case

#: (configuration, rows, cols, dtype)
RUNS = (((16, 8, 256, 1), 8191, 8193, "float16"),
        ((16, 8, 256, 4), 8191, 8193, "float16"),
        ((16, 8, 256, 1), 8192, 8192, "float16"),
        ((16, 16, 512, 1), 8191, 8193, "float16"),
        ((32, 16, 512, 1), 8191, 8193, "float32"),
        ((32, 16, 512, 4), 8191, 8193, "float32"),
        ((32, 32, 512, 1), 16384, 16384, "float64"))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for cfg, r, c, dtype in RUNS:
        launch_once(cupy, case, realigned(*cfg), r, c, dtype)


if __name__ == "__main__":
    main()
