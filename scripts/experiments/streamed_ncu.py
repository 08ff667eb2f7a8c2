"""Launch vec_streamed and vec_realigned once each at the odd shapes, for ncu (GPU):
python3 scripts/experiments/streamed_ncu.py [stalls]"""

from __future__ import annotations

import sys

from realigned import realigned
from realigned_ncu import launch_once
from streamed import streamed

from profiler_report.cases import get_case
from profiler_report.live.gpu import import_cupy

#: (stage, rows, cols, dtype)
RUNS = ((streamed(16, 512, 4), 8191, 8193, "float16"), (streamed(8, 256, 4), 8191, 8193, "float16"),
        (realigned(16, 8, 256), 8191, 8193, "float16"), (streamed(16, 512, 4), 8192, 8192, "float16"),
        (streamed(16, 512, 4), 8191, 8193, "float32"), (realigned(16, 16, 256), 8191, 8193, "float32"))


def main() -> None:
    cupy = import_cupy()
    case = get_case("transpose")
    runs = RUNS[:1] + RUNS[2:3] if "stalls" in sys.argv else RUNS
    for st, r, c, dtype in runs:
        launch_once(cupy, case, st, r, c, dtype)


if __name__ == "__main__":
    main()
