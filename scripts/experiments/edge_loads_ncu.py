"""Launch vec_realigned once per (variant, point) of edge_loads.py, for ncu (GPU).

Usage: ncu --clock-control none --metrics ... -k regex:transpose_vec_realigned python3 edge_loads_ncu.py
Order: for each run below, ``-DREALIGNED_EDGE_SERIAL=1`` first, then the batched edge.
"""

from __future__ import annotations

from edge_loads import VARIANTS
from realigned import realigned
from realigned_ncu import launch_once

from profiler_report.cases import get_case
from profiler_report.live.gpu import import_cupy

#: (configuration, rows, cols, dtype)
RUNS = (((16, 8, 256), 4097, 8191, "float16"), ((20, 16, 512), 8191, 8193, "float16"),
        ((16, 8, 256), 8192, 8192, "float16"), ((16, 32, 512), 4097, 8191, "float32"))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for cfg, r, c, dtype in RUNS:
        for _, opts in VARIANTS:
            launch_once(cupy, case, realigned(*cfg), r, c, dtype, opts)


if __name__ == "__main__":
    main()
