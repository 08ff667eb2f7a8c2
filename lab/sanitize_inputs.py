"""The sanitizer's child with each random input made once per process and copied for every later
use (instead of a seeded generator started per use): run under compute-sanitizer beside the tool's
own child to see how much of memcheck's time per stage the generator's start is.

    compute-sanitizer --tool memcheck python3 lab/sanitize_inputs.py sanitize --case transpose \\
        --size '{"rows": 67, "cols": 133}' --dtype float32 --stages naive,smem,...
"""

from __future__ import annotations

import json
import sys
from typing import Any

from profiler_report.cases.transpose import TransposeCase
from profiler_report.live import target

_made: dict[str, Any] = {}
_original = TransposeCase.make_input


def _once(self: TransposeCase, cupy: Any, size: dict[str, int], dtype: str, seed: int) -> Any:
    key = json.dumps([size, dtype, seed], sort_keys=True)
    if key not in _made:
        _made[key] = _original(self, cupy, size, dtype, seed)
    return _made[key].copy()


if __name__ == "__main__":
    TransposeCase.make_input = _once  # type: ignore[method-assign]
    sys.exit(target.main(sys.argv[1:]))
