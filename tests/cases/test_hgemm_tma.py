"""The TMA stages' tensor maps on the host: what the bf16 GEMM asks the driver's
cuTensorMapEncodeTiled for (dimensions innermost first, the row stride in bytes, the box of 64
elements by the tile's rows, the 128-byte swizzle, zero fill), and what the kernel receives (a
one-element array of 128 bytes, passed by value). The driver is replaced by a recorder: no GPU."""

from __future__ import annotations

import ctypes
import types

import numpy as np
import pytest

from profiler_report.cases.hgemm import launch as geo
from profiler_report.cases.hgemm import tma
from profiler_report.errors import InputError
from profiler_report.model.registry import get_case

CASE = get_case("hgemm")


class _Recorder:
    """Stands in for cuTensorMapEncodeTiled: records its arguments, writes a pattern, returns ``rc``."""

    def __init__(self, rc: int = 0) -> None:
        self.rc, self.calls = rc, []

    def __call__(self, out, dtype, rank, ptr, dims, strides, box, steps, interleave, swizzle, l2, oob):
        self.calls.append({"dtype": dtype, "rank": rank, "ptr": ptr.value, "dims": list(dims[:2]),
                           "strides": list(strides[:1]), "box": list(box[:2]), "steps": list(steps[:2]),
                           "interleave": interleave, "swizzle": swizzle, "oob": oob})
        words = ctypes.cast(out, ctypes.POINTER(ctypes.c_uint64))
        for i in range(16):
            words[i] = 100 + i
        return self.rc


def _operand(rows: int, ld: int, ptr: int):
    return types.SimpleNamespace(shape=(rows, ld), data=types.SimpleNamespace(ptr=ptr))


def test_the_map_describes_the_operand_and_the_tile_box(monkeypatch):
    rec = _Recorder()
    monkeypatch.setattr(tma, "_driver", lambda: rec)
    got = tma.encode(_operand(4095, 1000, 0x7F0000000080), 256)
    (call,) = rec.calls
    assert call["dims"] == [1000, 4095] and call["strides"] == [2000] and call["ptr"] == 0x7F0000000080
    assert call["box"] == [64, 256] and call["steps"] == [1, 1] and call["rank"] == 2
    assert (call["dtype"], call["interleave"], call["swizzle"], call["oob"]) == (1, 0, 3, 0)  # UINT16, 128B, zeros
    assert got.shape == (1,) and got.dtype.itemsize == 128 and got["words"][0].tolist() == list(range(100, 116))


def test_a_refused_map_is_one_line_with_the_fix(monkeypatch):
    monkeypatch.setattr(tma, "_driver", lambda: _Recorder(rc=1))
    with pytest.raises(InputError) as exc:
        tma.encode(_operand(8, 12, 0x1000), 128)
    assert "CUresult 1" in exc.value.message and "16-byte aligned" in exc.value.hint


@pytest.mark.parametrize("stage_id", ["tma_loads", "warp_specialized", "persistent"])
def test_the_tma_stages_get_maps_with_their_tile_rows(monkeypatch, stage_id):
    boxes = []
    monkeypatch.setattr(tma, "encode", lambda operand, box_rows: boxes.append((operand.shape, box_rows)) or operand)
    stage = next(s for s in CASE.manifest.stages if s.id == stage_id)
    size = {"m": 300, "n": 200, "k": 99}
    buf = CASE.make_input(types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("_")}),
                          size, "bfloat16", seed=1)
    args = CASE.kernel_args(stage, buf, np.empty(300 * 200, dtype=np.uint16), size)
    ld = geo.row_stride(99)
    assert boxes == [((300, ld), 128), ((200, ld), 256)]
    assert [int(x) for x in args[3:]] == [300, 200, 99, ld]


def test_pointer_stages_get_pointers(monkeypatch):
    monkeypatch.setattr(tma, "encode", lambda *a: pytest.fail("a pointer stage encoded a tensor map"))
    size = {"m": 8, "n": 8, "k": 8}
    np_ns = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("_")})
    buf = CASE.make_input(np_ns, size, "bfloat16", seed=1)
    args = CASE.kernel_args(CASE.manifest.stages[3], buf, np.empty(64, dtype=np.uint16), size)
    assert args[0].shape == (8, 8) and args[1].shape == (8, 8)
