"""Launch vec_realigned float16 [16,8,256] once at 8191x8193 and at shapes away from 16 KB row
strides, for ncu (GPU): python3 scripts/experiments/stride_ncu.py"""

from __future__ import annotations

from realigned import realigned
from realigned_ncu import launch_once

from profiler_report.live.gpu import import_cupy
from profiler_report.model.registry import get_case

SHAPES = ((8191, 8193), (8191, 9001), (9001, 8193), (9001, 9001))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    for r, c in SHAPES:
        launch_once(cupy, case, realigned(16, 8, 256), r, c, "float16")


if __name__ == "__main__":
    main()
