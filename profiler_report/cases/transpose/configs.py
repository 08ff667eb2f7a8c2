"""The stage variants the transpose's benchmark (:mod:`.bench`) times: ``vec_tuned`` at every
block shape of :data:`SHAPES` and ``vec_realigned`` at every configuration candidate of
:data:`CONFIGS` that fits the dtype and the shared memory. CPU only: stages, no timing."""

from __future__ import annotations

from dataclasses import replace

from profiler_report.cases.transpose.launch import dynamic_smem_bytes, realigned_rows_fit
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: Tile shapes of the block-shape sweep: (micro-block rows, micro-block columns, threads per block).
#: A micro-block is V x V elements (V = 16 / itemsize); each thread moves rows * cols / threads.
SHAPES = ((8, 8, 64), (8, 16, 128), (16, 8, 128), (16, 16, 128), (8, 32, 256), (32, 8, 256), (16, 16, 256),
          (16, 32, 256), (32, 16, 256), (32, 32, 256), (8, 64, 256), (16, 64, 256), (16, 32, 512),
          (32, 16, 512), (32, 32, 512), (64, 16, 512), (16, 64, 512), (64, 32, 512), (32, 64, 512))


#: Dynamic shared memory a block may opt in to on sm_90 (227 KB).
MAX_DYNAMIC_SMEM = 232448


def shape_stages(case: Case, dtype: str) -> list[Stage]:
    """The manifest's ``vec_tuned`` stage at every SHAPES entry whose tile fits in shared memory."""
    tuned = [s for s in case.manifest.stages if s.launch == "vec_tuned"]
    if not tuned:
        return []
    base, v = tuned[-1], 16 // ITEMSIZE[dtype]
    return [replace(base, id=f"{base.id} [{trc},{tcc},{nt}]", targs=(str(trc), str(tcc), str(nt)))
            for trc, tcc, nt in SHAPES if trc * tcc * v * 16 <= MAX_DYNAMIC_SMEM]


#: Candidate configurations of ``vec_realigned`` timed at every sweep point ([chunk rows, chunk
#: columns, threads] and optionally tiles per block: 8 to 32 rows (launch.realigned_rows_fit); 8 to
#: 32 columns; threads = 32 or 16 x columns, as the kernel's static_assert wants): the fastest
#: somewhere in lab/results/README.md (16 rows for float16, 32 columns for float64,
#: two double-buffered tiles per block for the largest float64 and float16 shapes; [16, 16, 256] and
#: [16, 32, 512] for float32 at the odd shapes; [20, 16, 512] and [24, 16, 512], three blocks per SM,
#: for float16 at three odd shapes; [8, 16, 256] for float16 at two). [32, 32, 1024] (one block per
#: SM) was the slowest everywhere. Small tiles for the L2-resident sizes ([8, 8, 256] and [16, 8, 128],
#: where the large ones run under a wave of blocks) were below the best stage at every L2 point
#: (lab/results/README.md, eleventh session).
CONFIGS = ((16, 8, 256), (16, 16, 512), (32, 8, 256), (32, 16, 256), (32, 16, 512), (32, 32, 512),
           (16, 8, 256, 2), (16, 16, 512, 2), (32, 16, 512, 2), (32, 32, 512, 2), (16, 16, 256), (16, 32, 512),
           (20, 16, 512), (24, 16, 512), (8, 16, 256))
#: The launch kind whose configuration the sweep chooses per point.
CONFIG_LAUNCH = "vec_realigned"


def config_stages(case: Case, dtype: str) -> list[Stage]:
    """The manifest's ``vec_realigned`` stage at every CONFIGS entry that the kernel takes for
    ``dtype`` (its rows: :func:`~profiler_report.cases.transpose.launch.realigned_rows_fit`) and whose
    shared memory fits (and at the manifest's own configuration where it fits); [] without the stage."""
    found = [s for s in case.manifest.stages if s.launch == CONFIG_LAUNCH]
    if not found:
        return []
    base = found[-1]
    default: tuple[int, ...] = tuple(int(a) for a in base.targs)
    v = 16 // ITEMSIZE[dtype]
    configs: list[tuple[int, ...]] = [c for c in CONFIGS if realigned_rows_fit(c[0], v)
               and dynamic_smem_bytes(replace(base, targs=tuple(map(str, c))), dtype) <= MAX_DYNAMIC_SMEM]
    fits = dynamic_smem_bytes(base, dtype) <= MAX_DYNAMIC_SMEM  # a default's tile may not fit this dtype
    configs += [default] if default not in configs and fits else []
    return [replace(base, id=f"{base.id} [{','.join(map(str, c))}]", targs=tuple(map(str, c))) for c in configs]
