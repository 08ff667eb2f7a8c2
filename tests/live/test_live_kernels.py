"""live/kernels.py without a GPU: a launch whose grid grows on the GPU (``Launch.extra_blocks``)
asks the occupancy API once per kernel and launch shape."""

from __future__ import annotations

from profiler_report.live import kernels as kmod
from profiler_report.model.base import Launch
from profiler_report.model.registry import get_case

CASE = get_case("transpose")
STAGE = CASE.manifest.stages[0]


def test_a_growing_grid_adds_the_cases_blocks_for_the_resident_ones_asked_once(monkeypatch):
    asked = []

    def resident_blocks(cupy, fn, threads, shared):
        asked.append((fn, threads, shared))
        return 660

    monkeypatch.setattr(kmod, "import_cupy", lambda: None)
    monkeypatch.setattr(kmod, "resident_blocks", resident_blocks)
    k = kmod.Kernels(None, {}, "float16", CASE)
    shape = Launch((2112,), (256,), 41728, lambda resident: resident // 5)
    assert k.grid(STAGE, shape, "fn") == (2244,)
    assert k.grid(STAGE, shape, "fn") == (2244,)
    assert asked == [("fn", 256, 41728)]
    assert k.grid(STAGE, Launch((7, 3), (32, 8)), "fn") == (7, 3)  # no extra_blocks: never asked
    assert len(asked) == 1


def test_kept_inputs_are_made_once_and_handed_out_as_copies(monkeypatch):
    import numpy
    from fakes import NumpyCupy

    made = []

    def make_input(self, cupy, size, dtype, seed):
        made.append(seed)
        return numpy.full((size["rows"], size["cols"]), float(seed + 1), dtype=dtype)

    monkeypatch.setattr(kmod, "import_cupy", NumpyCupy)
    monkeypatch.setattr(type(CASE), "make_input", make_input)
    size = {"rows": 3, "cols": 5}
    k = kmod.Kernels(None, {}, "float32", CASE, keep_inputs=True)
    first = k.make_input(STAGE, size, 0)
    first[0, 0] = -1  # a stage that writes its input
    again = k.make_input(STAGE, size, 0)
    assert made == [0] and again[0, 0] == 1.0 and again is not first
    k.make_input(STAGE, size, 1)
    assert made == [0, 1]
    plain = kmod.Kernels(None, {}, "float32", CASE)
    plain.make_input(STAGE, size, 0), plain.make_input(STAGE, size, 0)
    assert made == [0, 1, 0, 0]  # not kept: made every time
