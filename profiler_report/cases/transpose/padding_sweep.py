"""The padding sweep (the transpose walk-through's experiment: run ``[32][32]``, ``[32][33]``, ``[32][34]`` and see):
the ``padded`` stage's kernel with pad 0..4 elements, 4- and 8-byte elements and blockDim.x 32
and 16 (``kernels/transpose/padding_sweep.cu``), each point profiled once, its measured shared
wavefronts set beside the bank model's prediction (:mod:`~profiler_report.cases.transpose.banks`).

The points are :mod:`.padding_points`; the GPU side (validation, the profiled launches) is
:mod:`.padding_sweep_gpu`, imported only in ncu's target process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from profiler_report.cases.transpose.banks import column_read, row_store
from profiler_report.cases.transpose.padding_points import POINTS, SIZE, SOURCE, Point
from profiler_report.metrics import headline_row
from profiler_report.model.experiment import Experiment, ExperimentRow, ExperimentTable
from profiler_report.util.fmt import fmt
from profiler_report.util.frames import tuples

if TYPE_CHECKING:
    from profiler_report.capture.model import Capture

#: Measured and predicted agree when within this fraction of each other (wavefronts per
#: instruction, excessive wavefronts); the committed ``padded`` stage measures 1.06 wavefronts
#: per load on a conflict-free read, so a tighter bound would flag the counter, not the model.
MATCH_REL = 0.10
@dataclass(frozen=True)
class Prediction:
    """The bank model's figures for one point: wavefronts per shared load (the column read) and
    per store (the row store), their ideals, and the column read's conflict degree."""

    per_load: int
    per_store: int
    ideal_load: int
    ideal_store: int

    @property
    def degree(self) -> float:
        return self.per_load / self.ideal_load

    def excessive(self, load_instructions: float, store_instructions: float) -> float:
        """Excessive wavefronts over a launch: every warp-instruction makes the same access
        (:data:`SIZE` is a multiple of the tile), so (predicted - ideal) x instructions executed."""
        return ((self.per_load - self.ideal_load) * load_instructions
                + (self.per_store - self.ideal_store) * store_instructions)


def predict(p: Point) -> Prediction:
    ld, st = column_read(p.pad, p.elem_bytes, p.bx), row_store(p.pad, p.elem_bytes, p.bx)
    return Prediction(ld.wavefronts, st.wavefronts, ld.ideal, st.ideal)


def agrees(measured: float, predicted: float) -> bool | None:
    """Whether a measured figure agrees with the prediction within :data:`MATCH_REL`; None when
    it was not measured."""
    if math.isnan(measured):
        return None
    scale = max(abs(measured), abs(predicted))
    return scale == 0 or abs(measured - predicted) <= MATCH_REL * scale


#: The figures a point's row measures (headline columns of profiler_report.metrics).
MEASURED = ("shared_wavefronts_per_load", "shared_wavefronts_per_store", "shared_excessive_wavefronts",
            "shared_load_instructions", "shared_store_instructions", "duration_us")

HEADER = ["element", "blockDim.x", "tile", "predicted conflict (column read)", "wavefronts per load: predicted",
          "measured", "wavefronts per store: predicted", "measured", "excessive wavefronts: predicted", "measured",
          "model vs hardware"]


def measured_values(capture: Capture, experiment: Experiment) -> dict[str, dict[str, float]]:
    """Point id -> its launch's :data:`MEASURED` figures, from the experiment's capture (the
    formulas of :func:`profiler_report.metrics.headline_row`)."""
    wide = capture.wide()
    out: dict[str, dict[str, float]] = {}
    for launch in tuples(capture.launches()):
        point = experiment.point_of(str(launch.nvtx_range or ""))
        if point is None or launch.launch_id not in wide.index:
            continue
        raw = {str(k): float(v) for k, v in wide.loc[launch.launch_id].items() if v == v}
        row = headline_row(raw)
        out[point] = {k: float(row[k]) for k in MEASURED}
    return out


def _row(p: Point, got: dict[str, float] | None, valid: dict[str, Any] | None) -> ExperimentRow:
    pred = predict(p)
    nan = math.nan
    got = got or {}
    ld, st = got.get("shared_wavefronts_per_load", nan), got.get("shared_wavefronts_per_store", nan)
    exc = got.get("shared_excessive_wavefronts", nan)
    pred_exc = pred.excessive(got.get("shared_load_instructions", nan), got.get("shared_store_instructions", nan))
    checks = {"per load": agrees(ld, pred.per_load), "per store": agrees(st, pred.per_store),
              "excessive": agrees(exc, pred_exc) if not math.isnan(pred_exc) else None}
    wrong = [k for k, ok in checks.items() if ok is False]
    if valid is not None and not valid.get("correct", True):
        verdict, mismatch = "WRONG output: " + str(valid.get("message", "")), True
    elif not got:
        verdict, mismatch = "not measured (no launch of this point in the capture)", False
    elif wrong:
        verdict, mismatch = "MISMATCH: " + ", ".join(wrong) + f" differ by more than {MATCH_REL:.0%}", True
    else:
        verdict, mismatch = "matches", False
    degree = "conflict-free" if pred.degree == 1 else f"{pred.degree:g}-way"
    cells = [f"{p.elem_bytes} B", str(p.bx), p.tile, degree, fmt(pred.per_load), fmt(ld), fmt(pred.per_store), fmt(st),
             fmt(pred_exc) if got else "per instruction: " + fmt(pred.per_load - pred.ideal_load), fmt(exc), verdict]
    return ExperimentRow(p.id, cells, mismatch, verdict)


class PaddingSweep(Experiment):
    """The padding sweep of the transpose case (see the module docstring)."""

    id = "padding_sweep"
    #: The kernel files its points are built from (the result cache keys the sweep on them).
    source_files = (SOURCE,)
    title = "Padding sweep: the bank model against the hardware"
    #: Only what the table needs: per-instruction wavefronts (MemoryWorkloadAnalysis_Tables's
    #: metrics), excessive and ideal wavefronts (SourceCounters), the duration.
    ncu_options = ("--section", "SourceCounters", "--metrics", ",".join((
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
        "gpu__time_duration.sum")))

    def point_ids(self) -> list[str]:
        return [p.id for p in POINTS]

    def run_target(self, case: Any) -> list[dict[str, Any]]:
        from profiler_report.cases.transpose.padding_sweep_gpu import run_points  # CuPy: ncu's target only

        return run_points(case, self)

    def precompile(self) -> None:
        from profiler_report.cases.transpose.padding_sweep_gpu import compile_points  # CuPy: the GPU side only

        compile_points()

    def table(self, capture: Capture | None, validation: list[dict[str, Any]] | None) -> ExperimentTable:
        values = measured_values(capture, self) if capture is not None else {}
        valid = {str(v.get("point")): v for v in validation or []}
        rows = [_row(p, values.get(p.id), valid.get(p.id)) for p in POINTS]
        size = f"{SIZE['rows']}x{SIZE['cols']}"
        intro = ("The transpose walk-through says: run [32][32], [32][33], [32][34] on the same matrix "
                 "and see. Each row is the padded stage's kernel (kernels/transpose/padding_sweep.cu) with one pad, "
                 "element size and blockDim.x, "
                 f"one launch at {size} profiled with only the shared-memory metrics. Predicted: the bank model "
                 "(32 banks of 4 bytes; a wavefront serves one distinct word per bank and at most 128 bytes): "
                 "the column read tile[tx][ty] of a row pitch of P words hits gcd(P, 32) threads per bank for "
                 "4-byte elements and one warp per row, 2 gcd(P, 16) wavefronts for 8-byte elements; with "
                 "blockDim.x 16 a warp spans two rows and the counts are worked out per lane. Measured: "
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum / "
                 "smsp__sass_inst_executed_op_shared_ld/st.sum, and excessive wavefronts "
                 "(derived__memory_l1_wavefronts_shared_excessive, or wavefronts minus ideal). "
                 f"A row disagreeing by more than {MATCH_REL:.0%} is marked MISMATCH.")
        notes = [] if capture is not None else [
            f"Not recorded: this report folder holds no {self.id}.ncu-rep, so only the predictions are shown. "
            "A live run (`make report` on a GPU with ncu) profiles every point."]
        return ExperimentTable(self.id, self.title, intro, list(HEADER), rows, notes, values, capture is not None)


EXPERIMENT = PaddingSweep()
