"""The bf16 GEMM's operand and fragment layouts checked on the CPU against the PTX ISA's
definitions (the GPU tests check the results): the 128-byte swizzle the cp.async copies write
against what a wgmma descriptor makes the hardware read, the descriptor's bit fields, the wgmma
accumulator map, and the mma.sync stage's ldmatrix addresses against the m16n8k16 fragments.
The formulas mirror kernels/hgemm/hgemm.cu; the test also checks that the source still says them."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_report.model.registry import get_case

SOURCE = get_case("hgemm").manifest.source_text()


def sw128_offset(r: int, c: int) -> int:
    """Byte offset of row r's 16-byte chunk c in a swizzled tile (hgemm.cu sw128_offset)."""
    return r * 128 + ((c ^ (r & 7)) << 4)


def desc_fields(desc: int) -> dict[str, int]:
    """A wgmma shared-memory descriptor's fields (PTX ISA, "Matrix Descriptor Format")."""
    return {"start": (desc & 0x3FFF) << 4, "lbo": ((desc >> 16) & 0x3FFF) << 4,
            "sbo": ((desc >> 32) & 0x3FFF) << 4, "base_offset": (desc >> 49) & 7, "swizzle": (desc >> 62) & 3}


def desc_sw128(addr: int) -> int:
    """hgemm.cu desc_sw128."""
    return ((addr & 0x3FFFF) >> 4) | (1 << 16) | (64 << 32) | (1 << 62)


def hardware_read(desc: int, i: int, j: int) -> int:
    """The shared address the tensor core reads for row i (M or N index) and 16-byte chunk j of a
    K-major operand under 128B swizzle: core matrices of 8 rows x 16 bytes, rows 128 bytes apart
    in an 8-row group, groups ``sbo`` apart; then address bits [4, 7) XOR bits [7, 10)."""
    f = desc_fields(desc)
    assert f["swizzle"] == 1  # 128B
    logical = f["start"] + (i // 8) * f["sbo"] + (i % 8) * 128 + 16 * j
    return logical ^ (((logical >> 7) & 7) << 4)


def test_the_source_uses_these_formulas():
    assert "r * 128 + ((c ^ (r & 7)) << 4)" in SOURCE
    assert "((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62)" in SOURCE
    assert "desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k)" in SOURCE
    assert "wg * 64 * 128" in SOURCE and "(smem_u32(smem) + 1023u) & ~1023u" in SOURCE


@pytest.mark.parametrize("rows", [128, 256])
def test_the_swizzle_is_a_bijection_of_the_tile(rows):
    offsets = {sw128_offset(r, c) for r in range(rows) for c in range(8)}
    assert offsets == set(range(0, rows * 128, 16))


def test_the_descriptor_fields():
    f = desc_fields(desc_sw128(0x1C400))
    assert f == {"start": 0x1C400, "lbo": 16, "sbo": 1024, "base_offset": 0, "swizzle": 1}


@pytest.mark.parametrize("rows, row0", [(64, 0), (64, 64), (128, 0), (256, 0)])
def test_what_wgmma_reads_is_what_cp_async_wrote(rows, row0):
    # A warpgroup's A operand (64 rows from row0 of the 128-row tile) or a whole B tile (128 or
    # 256 rows), for each of the four 16-element K steps of a 64-deep tile; tile bases 1024-aligned.
    for base in (0, 5 * 1024, 131 * 1024):
        for kstep in range(4):
            desc = desc_sw128(base + row0 * 128 + 32 * kstep)
            for i in range(rows):
                for j in range(2):
                    assert hardware_read(desc, i, j) == base + sw128_offset(row0 + i, 2 * kstep + j)


def accumulator_position(warp: int, lane: int, reg: int) -> tuple[int, int]:
    """hgemm.cu store_wgmma_tile: (row, column) of accumulator ``reg`` of a warpgroup's lane."""
    return warp * 16 + lane // 4 + 8 * ((reg % 4) // 2), 8 * (reg // 4) + 2 * (lane % 4) + reg % 2


@pytest.mark.parametrize("n", [128, 256])
def test_the_accumulators_cover_the_64_by_n_tile_once(n):
    cells = [accumulator_position(w, lane, i) for w in range(4) for lane in range(32) for i in range(n // 2)]
    assert len(set(cells)) == len(cells) == 64 * n and max(cells) == (63, n - 1)


def ldmatrix_x4(tile: np.ndarray, addresses: list[tuple[int, int]]) -> np.ndarray:
    """Per lane, its four registers as (matrix, pair) of elements: lanes 8q..8q+7 address the
    rows of matrix q; lane t receives row t // 4, elements 2 (t % 4) and 2 (t % 4) + 1 of each."""
    out = np.zeros((32, 4, 2), tile.dtype)
    for t in range(32):
        for q in range(4):
            r, c = addresses[8 * q + t // 4]
            out[t, q] = tile[r, c + 2 * (t % 4):c + 2 * (t % 4) + 2]
    return out


def test_ldmatrix_addresses_give_the_mma_fragments():
    # The mma_sync stage's lane addresses (hgemm.cu) against the m16n8k16 .bf16 fragments: A
    # a0..a3 = rows g / g+8 x k 2t.. / 2t+8..; B b0, b1 = k 2t.. / 2t+8.. of column g (t = lane % 4,
    # g = lane / 4). Tiles of 128 rows x 32 K, one warp of the 2 x 4 grid at a time.
    rng = np.random.default_rng(1)
    a_tile, b_tile = rng.random((128, 32)), rng.random((128, 32))  # B's tile is N x K
    assert "lane % 16, c = kk + (lane / 16) * 8" in SOURCE
    assert "(lane / 16) * 8 + lane % 8, c = kk + ((lane / 8) % 2) * 8" in SOURCE
    for warp in range(8):
        wm, wn = warp // 4, warp % 4
        for kk in (0, 16):
            for mi in range(4):
                rows = [(wm * 64 + mi * 16 + lane % 16, kk + (lane // 16) * 8) for lane in range(32)]
                got = ldmatrix_x4(a_tile, rows)
                sub = a_tile[wm * 64 + mi * 16:, kk:]
                for t in range(32):
                    g, q = t // 4, 2 * (t % 4)
                    want = [sub[g, q:q + 2], sub[g + 8, q:q + 2], sub[g, q + 8:q + 10], sub[g + 8, q + 8:q + 10]]
                    assert np.array_equal(got[t], want)
            for nj in range(2):
                got = ldmatrix_x4(b_tile, [(wn * 32 + nj * 16 + (lane // 16) * 8 + lane % 8, kk + ((lane // 8) % 2) * 8)
                                           for lane in range(32)])
                for half in range(2):  # registers (0, 1): n-tile 2 nj; (2, 3): n-tile 2 nj + 1
                    bt = b_tile[wn * 32 + nj * 16 + 8 * half:, kk:]  # rows: n, columns: k
                    for t in range(32):
                        g, q = t // 4, 2 * (t % 4)
                        assert np.array_equal(got[t, 2 * half], bt[g, q:q + 2])
                        assert np.array_equal(got[t, 2 * half + 1], bt[g, q + 8:q + 10])
