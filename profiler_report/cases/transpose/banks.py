"""The shared-memory bank model of the transpose tile: which bank each thread of one warp hits,
and how many wavefronts that access takes. Standard library only.

The model (written once; the padding sweep, the bank-map pictures and the claims use it):

- Shared memory has :data:`BANKS` = 32 banks, each :data:`BANK_BYTES` = 4 bytes wide; the 4-byte
  word at word address ``w`` sits in bank ``w % 32``.
- One warp-wide shared instruction is served in wavefronts. A wavefront reads at most one
  distinct word per bank (threads reading the *same* word share it: a broadcast) and at most
  :data:`WAVEFRONT_BYTES` = 128 bytes, so a warp's access takes
  ``max(max over banks of the distinct words it needs there, ceil(bytes requested / 128))``
  wavefronts (:func:`wavefronts`). The second term is the *ideal*: 1 for a warp of 4-byte
  elements, 2 for 8-byte elements (32 x 8 = 256 bytes).
- The tile is ``T tile[32][32 + pad]`` (row pitch ``P = 32 + pad`` elements, ``e`` = element
  bytes / 4 words per element), threads ``(tx, ty) = (lane % bx, lane // bx)`` of a block
  ``bx`` threads wide. The store into the tile writes ``tile[ty][tx]`` (a row), the column read
  reads ``tile[tx][ty]`` (a column): word address ``(row * P + col) * e``.

Worked cases of the column read (:func:`column_read`), what the tests check exactly:

- 4-byte elements, ``bx = 32`` (one warp = one tile row of threads): thread ``tx`` reads word
  ``tx * P``; the 32 threads hit ``32 / gcd(P, 32)`` distinct banks, ``gcd(P, 32)`` threads each:
  a ``gcd(P, 32)``-way conflict, ``gcd(P, 32)`` wavefronts. ``[32][32]``: 32; ``[32][33]``: 1;
  ``[32][34]``: 2; ``[32][35]``: 1; ``[32][36]``: 4.
- 8-byte elements, ``bx = 32``: thread ``tx`` reads words ``2 tx P`` and ``2 tx P + 1``, the bank
  pair ``tx * P mod 16``; 32 threads over 16 pairs, ``2 gcd(P, 16)`` per pair:
  ``2 * gcd(P, 16)`` wavefronts against an ideal of 2 (a ``gcd(P, 16)``-way conflict).
  ``[32][32]``: 32; ``[32][33]``: 2 (conflict-free); ``[32][34]``: 4; ``[32][36]``: 8. The pad is
  counted in elements: an odd number of 4-byte words would misalign the 8-byte accesses.
- ``bx = 16`` (a warp covers two rows of threads, ``ty`` and ``ty + 1``): 4-byte elements read
  word ``tx * P + ty``, ``tx`` in 0..15, ``ty`` in {0, 1}. ``[32][32]``: bank ``ty`` for all 16
  threads of a row, 16 wavefronts; ``[32][33]``: bank ``tx + ty``, threads ``(tx, 1)`` and
  ``(tx + 1, 0)`` share a bank with different words, 2 wavefronts: the one-element pad is not
  enough once a warp spans two rows; ``[32][34]``: bank ``2 tx + ty``, all 32 distinct, 1
  wavefront; ``[32][36]``: 2. 8-byte elements with ``bx = 16``: ``[32][32]`` takes 16, ``[32][33]`` 2 wavefronts,
  the ideal. The store side with ``bx = 16`` writes word ``ty * P + tx``: two rows of 16 that
  overlap in banks unless ``P % 32 == 16``, so it conflicts 2-way at every pad of 0..4.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

#: Banks of shared memory, and the width of one bank in bytes (every GPU since Maxwell).
BANKS, BANK_BYTES = 32, 4
#: Bytes one wavefront can serve.
WAVEFRONT_BYTES = BANKS * BANK_BYTES
WARP = 32
#: Tile side of the transpose's scalar stages (kernels/transpose/transpose.cu ``TILE``).
TILE = 32


@dataclass(frozen=True)
class WarpAccess:
    """One warp's shared access: per lane, the words it touches and their banks; its wavefronts.

    ``words[i]`` are lane ``i``'s 4-byte word addresses (``e`` consecutive words for an element
    of ``e`` words); ``banks[i]`` their banks; ``wavefronts`` the model's count and ``ideal`` the
    count without conflicts (bytes / 128); ``degree`` = wavefronts / ideal (1: conflict-free).
    """

    words: tuple[tuple[int, ...], ...]
    banks: tuple[tuple[int, ...], ...]
    wavefronts: int
    ideal: int

    @property
    def degree(self) -> float:
        return self.wavefronts / self.ideal

    def lanes_per_bank(self) -> dict[int, list[int]]:
        """Bank -> the lanes that touch a word in it (a lane of an 8-byte element appears twice)."""
        out: dict[int, list[int]] = defaultdict(list)
        for lane, banks in enumerate(self.banks):
            for b in banks:
                out[b].append(lane)
        return dict(out)


def wavefronts(words: list[tuple[int, ...]]) -> tuple[int, int]:
    """(wavefronts, ideal) of one warp access whose lane ``i`` touches the words ``words[i]``.

    Wavefronts: the most distinct words any one bank must serve, at least the ideal; ideal:
    ``ceil(distinct words * 4 / 128)`` (a broadcast word counts once).
    """
    per_bank: dict[int, set[int]] = defaultdict(set)
    for lane_words in words:
        for w in lane_words:
            per_bank[w % BANKS].add(w)
    distinct = sum(len(s) for s in per_bank.values())
    ideal = max(1, math.ceil(distinct * BANK_BYTES / WAVEFRONT_BYTES))
    return max(ideal, max((len(s) for s in per_bank.values()), default=0)), ideal


def tile_access(pad: int, elem_bytes: int, bx: int, column: bool) -> WarpAccess:
    """The first warp of a block ``bx`` threads wide on ``tile[32][32 + pad]`` of ``elem_bytes``
    elements: the column read ``tile[tx][ty]`` (``column``) or the row store ``tile[ty][tx]``.

    Raises:
        ValueError: ``elem_bytes`` is not a multiple of 4, or ``bx`` does not divide 32.
    """
    if elem_bytes % BANK_BYTES or not 0 < bx <= WARP or WARP % bx:
        raise ValueError(f"no bank model for {elem_bytes}-byte elements with blockDim.x {bx}")
    e, pitch = elem_bytes // BANK_BYTES, TILE + pad
    lanes = []
    for lane in range(WARP):
        tx, ty = lane % bx, lane // bx
        row, col = (tx, ty) if column else (ty, tx)
        first = (row * pitch + col) * e
        lanes.append(tuple(range(first, first + e)))
    wf, ideal = wavefronts(lanes)
    return WarpAccess(tuple(lanes), tuple(tuple(w % BANKS for w in ws) for ws in lanes), wf, ideal)


def column_read(pad: int, elem_bytes: int = 4, bx: int = 32) -> WarpAccess:
    """The column read of the transpose's tile (the access a pad fixes): see the module docstring."""
    return tile_access(pad, elem_bytes, bx, column=True)


def row_store(pad: int, elem_bytes: int = 4, bx: int = 32) -> WarpAccess:
    """The row store into the tile: conflict-free for ``bx = 32`` at any pad."""
    return tile_access(pad, elem_bytes, bx, column=False)

