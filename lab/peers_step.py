"""Where the transpose's peers' step spends its seconds when the peers are built in the step itself
(no warm-up beside the sanitizer): the peer libraries imported first (as the peers' process does
while the run's other steps go on), the stages' kernels compiled (as the run's own process does
first), then `Case.bench_at` at 8192x8192 float32 with each part timed: the buffers, the
compiles, the clock warm-up, every stage and copy kernel, and each peer (build, check, timing).
Empty compiler caches (CuPy, Triton, TorchInductor), as in a cold run.

    python3 lab/peers_step.py OUT.txt        # on the GPU machine, from the repository root

Nothing here is part of the tool.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

TMP = Path(tempfile.mkdtemp(prefix="peers-step-"))
os.environ.update({"CUPY_CACHE_DIR": str(TMP / "cupy"), "TRITON_CACHE_DIR": str(TMP / "triton"),
                   "TORCHINDUCTOR_CACHE_DIR": str(TMP / "inductor")})

from profiler_report.cases.transpose import bench as tb  # noqa: E402
from profiler_report.live import bench as lb  # noqa: E402
from profiler_report.live.kernels import compile_module  # noqa: E402
from profiler_report.live.peers_process import PEER_IMPORTS  # noqa: E402
from profiler_report.model.registry import get_case  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    def wrapper(*a, **kw):  # type: ignore[no-untyped-def]
        t0 = time.monotonic()
        try:
            return fn(*a, **kw)
        finally:
            SPENT[label(*a) if callable(label) else label] += time.monotonic() - t0
    return wrapper


def main() -> int:
    out = Path(sys.argv[1])
    lines = []
    t0 = time.monotonic()
    for name in PEER_IMPORTS:
        t = time.monotonic()
        importlib.import_module(name)
        lines.append(f"import {name:<32} {time.monotonic() - t:6.2f} s")
    case = get_case("transpose")
    t = time.monotonic()
    compile_module(case, "float32")
    lines.append(f"{'the stages compiled (the run does it first)':<40} {time.monotonic() - t:6.2f} s")
    tb.make_pairs = timed("make_pairs (3 input/output pairs)", tb.make_pairs)
    tb.compile_module = timed("compile_module (stages + copies)", tb.compile_module)
    tb.warm_sm_clocks = timed("warm_sm_clocks", tb.warm_sm_clocks)
    lb.Point.kernel = timed(lambda self, name, *a: "kernels: check + timing", lb.Point.kernel)
    lb.Point.memcpy = timed("memcpy", lb.Point.memcpy)
    lb.Point.peer = timed(lambda self, p: f"peer {p.name}", lb.Point.peer)
    t = time.monotonic()
    doc = case.bench_at({"rows": 8192, "cols": 8192}, "float32", 30, list(case.manifest.stages), {})
    step = time.monotonic() - t
    lines += [f"{k:<40} {v:6.2f} s" for k, v in SPENT.items()]
    lines.append(f"{'bench_at in all (the peers step)':<40} {step:6.2f} s")
    lines.append(f"{'from the start':<40} {time.monotonic() - t0:6.2f} s")
    lines += [f"  {r['name']:<32} {r.get('median_us', float('nan')):9.1f} us {r.get('note', '')}"
              for r in doc.get("rows", [])]
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
