"""Launch shapes and summation depth of the reduction's kernels (``launch`` in stages.toml)."""

from __future__ import annotations

import math

from profiler_report.model.base import Launch
from profiler_report.model.manifest import Manifest, Stage
from profiler_report.util.dtypes import ITEMSIZE

#: Elements per 16-byte vector load (float4 / int4; every reduction dtype is 4 bytes).
VEC = 4

#: ``launch`` kinds whose grid is fixed (``grid_blocks``) and strides over the input.
GRID_STRIDE = ("grid", "grid_vec4", "one_pass")


def threads(stage: Stage, manifest: Manifest) -> int:
    """Threads per block: the template's BLOCK where the kernel takes one, else ``threads``."""
    return int(stage.targs[0]) if stage.targs else int(manifest.params.get("threads", 256))


def loads(stage: Stage) -> int:
    """16-byte loads a thread issues per iteration: the template's LOADS, else 2 (Harris's
    first add)."""
    return int(stage.targs[1]) if len(stage.targs) > 1 else 2


#: Every launch kind :func:`per_block` knows.
LAUNCH_KINDS = ("block", "first_add", "grid", "grid_vec4", "one_pass")


def per_block(stage: Stage, manifest: Manifest) -> int:
    """Elements one block reduces in one sweep of its threads (a grid-stride block loops)."""
    t = threads(stage, manifest)
    if stage.launch == "block":
        return t
    if stage.launch in ("first_add", "grid"):
        return 2 * t
    if stage.launch in ("grid_vec4", "one_pass"):
        return loads(stage) * t * VEC
    raise ValueError(f"stage {stage.id}: unknown launch {stage.launch!r}")


def blocks(stage: Stage, manifest: Manifest, n: int) -> int:
    """Blocks of one pass over ``n`` elements: one per ``per_block`` elements, at most
    ``grid_blocks`` for the grid-stride kinds."""
    need = max(1, math.ceil(n / per_block(stage, manifest)))
    if stage.launch in GRID_STRIDE:
        return min(need, int(manifest.params.get("grid_blocks", 1056)))
    return need


def launch(stage: Stage, manifest: Manifest, n: int, dtype: str) -> Launch:
    """Grid, block and dynamic shared memory (``threads * itemsize`` bytes) of one pass."""
    t = threads(stage, manifest)
    return Launch((blocks(stage, manifest, n),), (t,), t * ITEMSIZE[dtype])


def passes(stage: Stage, manifest: Manifest, n: int) -> list[int]:
    """Element counts of each pass: ``[n, partials of pass 1, ...]`` until one block is left;
    one pass for the one-pass stage and the read ceiling."""
    counts = [n]
    if stage.launch == "one_pass" or stage.op == "read":
        return counts
    while (b := blocks(stage, manifest, counts[-1])) > 1:
        counts.append(b)
    return counts


def chain_length(stage: Stage, manifest: Manifest, n: int) -> int:
    """The longest chain of floating-point additions behind the result (the height ``h`` of the
    summation in Higham's bound |error| <= h u / (1 - h u) * sum |x|): per pass, the elements one
    thread accumulates in sequence plus the log2(threads) levels of the block's tree; the one-pass
    stage adds its last block's sweep over the partials."""
    t = threads(stage, manifest)
    tree = math.ceil(math.log2(t))
    h = 0
    for count in passes(stage, manifest, n):
        b = blocks(stage, manifest, count)
        h += math.ceil(count / (b * t)) + tree
    if stage.launch == "one_pass":
        h += math.ceil(blocks(stage, manifest, n) / t) + tree
    return h
