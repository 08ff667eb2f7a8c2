"""Setup shared by the timing experiments (GPU): memcpy, the 16-byte copy kernel and vec_tuned as
``fn(src, dst)`` callables, on the bench's buffer pairs with an output per pair (as these
experiments were recorded, before the bench shared one output: bench.make_pairs)."""

from __future__ import annotations

from typing import Any

from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import memcpy_fn
from profiler_report.live.kernels import Kernels, compile_module
from profiler_report.model.base import Case


def copy_and_tuned(cupy: Any, case: Case, dtype: str, r: int, c: int, buffers: int = 3) -> tuple[list, dict]:
    """(pairs, {name: fn}) at ``r x c`` ``dtype``: memcpy, "copy 16B x1" and vec_tuned, in that order."""
    tuned = next(s for s in case.manifest.stages if s.launch == "vec_tuned")
    copy16 = bench.COPIES[2]
    module, names = compile_module(case, dtype, extra=(copy16,))
    k = Kernels(module, names, dtype, case)
    pairs = bench.make_pairs(case, cupy, r, c, dtype, buffers, shared_output=False)
    size = {"rows": r, "cols": c}
    fns: dict[str, Any] = {"memcpy": memcpy_fn(cupy)}
    for st in (copy16, tuned):
        def fn(src: Any, dst: Any, st: Any = st) -> None:
            k.launch(st, src, dst, size)
        fns[st.id] = fn
    return pairs, fns
