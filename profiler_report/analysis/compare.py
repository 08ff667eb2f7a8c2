"""Comparing two runs: whether they are comparable, and a per-stage diff of their summaries.

Sits after the analysis: it takes two analyzed runs (:class:`~profiler_report.analysis.run.Run`)
or their summary frames. ``profiler-report diff`` prints :func:`diff_table`; ``check --baseline``
and ``render --baseline`` call :func:`require_comparable`; the report's comparison section is
built from :func:`comparison_rows`. Values with their units are written by
:func:`~profiler_report.util.fmt.fmt_value` (re-exported here for the gate). Plain text and dicts only: nothing here
imports the HTML layer, the gate or the GPU side.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.capture.model import Capture
from profiler_report.errors import InputError
from profiler_report.metrics import HEADLINE, SINGLE_LAUNCH_COLUMNS, TIMING_COLUMNS, Column
from profiler_report.util.fmt import fmt_value, markdown_table
from profiler_report.util.frames import tuples

if TYPE_CHECKING:
    from profiler_report.analysis.run import Run

#: Keys of provenance.json that make two runs comparable (compared where both sides have them).
COMPARABLE_KEYS = ("gpu", "sm_count", "driver", "ncu_version", "clock_control", "cache_control", "section_set",
                   "rows", "cols", "profile_rows", "profile_cols", "dtype")


_CXX_DTYPES = {"float": "float32", "double": "float64", "unsigned short": "float16", "__half": "float16",
               "half": "float16", "unsigned char": "uint8", "int": "int32", "unsigned int": "uint32"}


_VERSION = re.compile(r"\d{4}\.\d+(?:\.\d+)?")


def run_identity(capture: Capture, provenance: dict[str, Any] | None) -> dict[str, str]:
    """What makes a run comparable, as strings: provenance.json's :data:`COMPARABLE_KEYS` when
    recorded, else what the capture holds (GPU name and SM count from ``device__attribute_*``,
    the dtype from the kernels' template argument)."""
    prov = provenance or {}
    dims = [str(d) for d in prov.get("dims", [])] if isinstance(prov.get("dims"), list) else []
    keys = dict.fromkeys([*COMPARABLE_KEYS, *dims, *(f"profile_{d}" for d in dims)])  # a case's own size
    ident = {k: str(prov[k]) for k in keys if k in prov and prov[k] not in (None, "")}
    dev = capture.device
    for key in ("gpu", "sm_count"):
        if key not in ident and key in dev:
            ident[key] = str(dev[key])
    if "ncu_version" in ident:
        m = _VERSION.search(ident["ncu_version"])
        ident["ncu_version"] = m.group(0) if m else ident["ncu_version"]
    if "dtype" not in ident:
        # The first template argument is the element type (transpose_vec_deep<float, (int)2>).
        args = {m.group(1).split(",")[0].strip() for d in capture.launches()["demangled"]
                for m in [re.search(r"<([^<>]+)>\s*\(", str(d))] if m}
        if len(args) == 1 and next(iter(args)) in _CXX_DTYPES:
            ident["dtype"] = _CXX_DTYPES[next(iter(args))]
    return ident


def comparability(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """'key: old vs new' for each key both identities hold with different values; [] when comparable."""
    keys = dict.fromkeys([*COMPARABLE_KEYS, *old, *new])
    return [f"{k}: {old[k]} vs {new[k]}" for k in keys if k in old and k in new and old[k] != new[k]]


#: Stages named in a launch-shape warning before "and N more".
_SHOWN = 2


def launch_shapes(old: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """'grid of naive: (128, 128, 1) vs (256, 256, 1)' for each of grid and block that differs on
    stages both summaries hold (the first :data:`_SHOWN` stages, then how many more)."""
    out = []
    common = [s for s in old["stage"] if s in set(new["stage"])]
    for col in ("grid", "block"):
        if col not in old or col not in new:
            continue
        a, b = old.set_index("stage")[col], new.set_index("stage")[col]
        differ = [s for s in common if str(a[s]) != str(b[s]) and "?" not in str(a[s]) + str(b[s])]
        for s in differ[:_SHOWN]:
            out.append(f"{col} of {s}: {a[s]} vs {b[s]}")
        if len(differ) > _SHOWN:
            out.append(f"{col} differs on {len(differ) - _SHOWN} more stages")
    return out


#: Beyond this ratio of DRAM bytes per launch, two runs did different amounts of work.
WORK_RATIO = 1.25


def work_size(old: pd.DataFrame, new: pd.DataFrame, common_only: bool = True) -> list[str]:
    """'work size ...: 134,217,728 vs 536,870,912 bytes' when the DRAM bytes read + written
    (``dram__bytes_read.sum + dram__bytes_write.sum``), median over the stages both hold (every
    stage of each, without ``common_only``: two files of one ladder hold different stages), differ
    by more than :data:`WORK_RATIO` either way: the size of runs without a recorded one."""
    common = [s for s in old["stage"] if s in set(new["stage"])]
    if (common_only and not common) or "dram_read_bytes" not in old or "dram_read_bytes" not in new:
        return []

    def total(frame: pd.DataFrame) -> float:
        sub = frame.set_index("stage").loc[common] if common_only else frame
        return float((sub["dram_read_bytes"] + sub["dram_write_bytes"]).median())

    a, b = total(old), total(new)
    if math.isnan(a) or math.isnan(b) or a <= 0 or b <= 0 or 1 / WORK_RATIO <= b / a <= WORK_RATIO:
        return []
    which = f"median of {len(common)} common stages" if common_only else "median of each side's stages"
    return [f"work size (DRAM bytes read + written per launch, {which}): "
            f"{fmt_value(a, 'byte')} vs {fmt_value(b, 'byte')} ({b / a:.2f}x)"]


#: Provenance keys that state a run's size: with them on both sides, DRAM bytes are not needed.
_SIZE_KEYS = ("rows", "cols", "profile_rows", "profile_cols")


def require_comparable(old: Run, new: Run, strict: bool) -> list[str]:
    """The differences between two runs; under ``strict`` any difference is an error.

    Compared: the :func:`run_identity` keys both hold (GPU, ncu, clocks, size, dtype...), the
    grid and block of every stage both hold (:func:`launch_shapes`), and, where a side has no
    recorded size, the work size from DRAM bytes (:func:`work_size`).

    Raises:
        InputError: ``strict`` and the runs are not comparable.
    """
    a, b = run_identity(old.capture, old.provenance), run_identity(new.capture, new.provenance)
    sized = any(k in a and k in b for k in (*_SIZE_KEYS, *(f"profile_{d}" for d in old.provenance.get("dims", []))))
    diffs = differences(a, b, old.summary, new.summary, sized)
    if diffs and strict:
        raise InputError(f"{old.path} and {new.path} are not comparable: {'; '.join(diffs)}",
                         "compare runs recorded the same way, or drop --strict to compare anyway")
    return diffs


def differences(a: dict[str, str], b: dict[str, str], old: pd.DataFrame, new: pd.DataFrame, sized: bool,
                common_only: bool = True) -> list[str]:
    """What makes two runs (or two files of one ladder) not comparable: their :func:`run_identity`
    values, the launch shapes of stages both hold, and, without a recorded size (``sized``), the
    DRAM work per launch (:func:`work_size`). The one check of ``diff --strict``, ``render
    --baseline --strict`` and a ladder of several captures (:func:`ladder_mixed`)."""
    diffs = comparability(a, b) + launch_shapes(old, new)
    if not sized:  # no recorded size on one side: the DRAM traffic says it
        diffs += work_size(old, new, common_only)
    return diffs


def ladder_mixed(captures: list[Capture], summary: pd.DataFrame, origins: dict[int, str]) -> dict[str, str]:
    """For a ladder of several captures (``origins``: launch id -> file label), what is not
    comparable between a file and the first (:func:`differences`): identity key -> "value
    (file), value (file), ..." over every file, and "work size" -> each difference; {} when the
    files are comparable (or only one)."""
    labels = list(dict.fromkeys(origins.values()))
    if len(captures) < 2 or len(labels) != len(captures):
        return {}
    idents = [run_identity(c, None) for c in captures]
    frames = [summary[summary["launch_id"].map(origins) == lab] for lab in labels]
    frames = [f[f["role"] == "stage"] for f in frames]
    out: dict[str, str] = {}
    for ident, frame, label in zip(idents[1:], frames[1:], labels[1:], strict=True):
        for d in differences(idents[0], ident, frames[0], frame, sized=False, common_only=False):
            key = d.split(":", 1)[0]
            key = "work size" if key.startswith("work size") else key
            if key in idents[0]:
                out[key] = ", ".join(f"{i.get(key, '?')} ({lab})" for i, lab in zip(idents, labels, strict=True))
            else:
                out.setdefault(key, "")
                out[key] += ("; " if out[key] else "") + f"{labels[0]} vs {label}: {d.split(':', 1)[1].strip()}"
    return out


#: Summary columns a diff compares. The raw bank-conflict counters are left out (they differ
#: between identical runs); single-launch times are shown but never flagged.
DIFF_METRICS: tuple[str, ...] = tuple(
    c.name for c in (*HEADLINE, *TIMING_COLUMNS)
    if c.name not in ("bank_conflicts_ld_raw", "bank_conflicts_st_raw", "event_p10_us", "event_p90_us")
)


SINGLE_LAUNCH_TIME = SINGLE_LAUNCH_COLUMNS


DIFF_COLUMNS = ["stage", "metric", "unit", "old", "new", "change", "flagged", "direction", "note"]


#: Headline and event-timing column name -> its column.
_COLUMNS: dict[str, Column] = {c.name: c for c in (*HEADLINE, *TIMING_COLUMNS)}


_TIMING_NAMES = frozenset(c.name for c in TIMING_COLUMNS)


def _unit_of(name: str) -> str:
    col = _COLUMNS.get(name)
    return col.unit if col else ""


def _spread_separates(old: pd.Series, new: pd.Series) -> bool:
    """True when the event-timing bands p10..p90 of the two runs do not overlap."""
    vals = [float(x.get(c, math.nan)) for x in (old, new) for c in ("event_p10_us", "event_p90_us")]
    if any(math.isnan(v) for v in vals):
        return False
    return vals[2] > vals[1] or vals[3] < vals[0]


def _diff_row(stage: str, name: str, old: pd.Series, new: pd.Series, tolerance: float) -> dict[str, Any] | None:
    a, b = float(old.get(name, math.nan)), float(new.get(name, math.nan))
    if math.isnan(a) and math.isnan(b):
        return None
    row = {"stage": stage, "metric": name, "unit": _unit_of(name), "old": a, "new": b, "change": math.nan,
           "flagged": False, "direction": "", "note": ""}
    if math.isnan(a) or math.isnan(b):
        row["note"] = f"not measured in {'old' if math.isnan(a) else 'new'}"
        return row
    if a != 0:
        row["change"] = (b - a) / abs(a)
        beyond = abs(b - a) > tolerance * abs(a)
    else:
        row["change"] = 0.0 if b == 0 else math.nan
        beyond = b != 0
    if name in SINGLE_LAUNCH_TIME:
        row["note"] = "single profiled launch: not flagged (time is flagged on event timings)"
    elif name in _TIMING_NAMES:
        row["flagged"] = beyond and _spread_separates(old, new)
        if beyond and not row["flagged"]:
            row["note"] = "within the run-to-run spread (p10..p90 overlap)"
    else:
        row["flagged"] = beyond
    if row["flagged"]:
        row["direction"] = direction(name, a, b)
    return row


def direction(metric: str, old: float, new: float) -> str:
    """"better" or "worse" for a change of ``metric`` from ``old`` to ``new`` by the registry's
    ``better`` ("lower" or "higher"); "" for a metric without a direction, or no change."""
    better = _COLUMNS[metric].better if metric in _COLUMNS else ""
    if not better or new == old:
        return ""
    return "better" if (new < old) == (better == "lower") else "worse"


def regressions(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`diff_summaries` that ``diff --fail-on regression`` fails on: a gated
    metric (one a threshold rule may use: no raw counter, no single-launch time) flagged beyond
    the tolerance (event timings: beyond their p10..p90 spread too) in its worse direction."""
    gated = frame["metric"].map(lambda m: m in _COLUMNS and _COLUMNS[m].gate and m not in SINGLE_LAUNCH_TIME)
    return frame[frame["flagged"] & (frame["direction"] == "worse") & gated]


def diff_summaries(old: pd.DataFrame, new: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """Per stage, each headline metric old, new and change between two summaries.

    Args:
        old, new: :attr:`Analysis.summary` frames (headline columns in their HEADLINE units).
        tolerance: relative change beyond which a count or ratio is flagged (0.05 = 5 %).

    Returns:
        Columns :data:`DIFF_COLUMNS`: stage, metric, unit, old, new, change (relative,
        (new - old) / |old|; NaN when old is 0 and new is not, or one side is missing),
        flagged (bool), direction ("better", "worse" by the column's ``better``, "" without one or
        unflagged), note. Stages present on one side only get one row, metric "(stage)",
        flagged. Event timings are flagged only when, beyond the tolerance, their p10..p90 bands
        do not overlap; single-launch times (duration_us and the DRAM throughput derived from it)
        are never flagged; the raw bank-conflict counters are not compared.
    """
    rows: list[dict[str, Any]] = []
    old_stages, new_stages = list(old["stage"]), list(new["stage"])
    for stage in dict.fromkeys([*new_stages, *old_stages]):
        if stage not in old_stages or stage not in new_stages:
            side = "old" if stage in old_stages else "new"
            rows.append({"stage": stage, "metric": "(stage)", "unit": "", "old": math.nan, "new": math.nan,
                         "change": math.nan, "flagged": True, "direction": "", "note": f"stage only in {side}"})
            continue
        a, b = old[old["stage"] == stage].iloc[0], new[new["stage"] == stage].iloc[0]
        for name in DIFF_METRICS:
            row = _diff_row(stage, name, a, b, tolerance)
            if row is not None:
                rows.append(row)
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def fmt_change(change: float, old: float = math.nan) -> str:
    """'+12.5%', '=', 'from 0' (old was 0), '' (unknown)."""
    if math.isnan(change):
        return "from 0" if old == 0 else ""
    if change == 0:
        return "="
    return f"{change:+.1%}"


def _cell(x: float, unit: str, metric: str) -> str:
    """A diff value as shown: '-' on a "(stage)" row (a stage on one side only)."""
    return "-" if metric == "(stage)" else fmt_value(x, unit)


def mark(r: Any) -> str:
    """A diff row's mark: "worse" / "better" (flagged, by the metric's direction), "!!" (flagged,
    no direction: a count that changed, a stage on one side only), "" (not flagged)."""
    return (r.direction or "!!") if r.flagged else ""


def diff_table(frame: pd.DataFrame, flagged_only: bool = False) -> str:
    """Plain-text table of :func:`diff_summaries`, each flagged row marked by :func:`mark`."""
    sub = frame[frame["flagged"]] if flagged_only else frame
    head = ("", "stage", "metric", "old", "new", "change", "note")
    rows = [(mark(r), r.stage, r.metric, _cell(r.old, r.unit, r.metric),
             _cell(r.new, r.unit, r.metric), fmt_change(r.change, r.old), r.note) for r in tuples(sub)]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip() for row in (head, *rows)]
    return "\n".join(lines)


def diff_markdown(frame: pd.DataFrame, old: str, new: str, tolerance: float, show_all: bool = False) -> str:
    """GitHub-flavoured Markdown of a diff for ``$GITHUB_STEP_SUMMARY``: a heading with the
    outcome (regressions of :func:`regressions`, else the flagged count), then the flagged rows
    (every row under ``show_all``) with their mark."""
    worse, flagged = regressions(frame), frame[frame["flagged"]]
    outcome = f"{len(worse)} regression{'s' * (len(worse) != 1)}" if len(worse) else "no regression"
    sub = frame if show_all else flagged
    rows = [[f"**{mark(r)}**" if mark(r) == "worse" else mark(r), r.stage, f"`{r.metric}`",
             _cell(r.old, r.unit, r.metric), _cell(r.new, r.unit, r.metric), fmt_change(r.change, r.old), r.note]
            for r in tuples(sub)]
    table = markdown_table(["", "stage", "metric", "old", "new", "change", "note"], rows,
                           ["l", "l", "l", "r", "r", "r", "l"]) if rows else "No value changed beyond the tolerance."
    return (f"### profiler-report diff: {outcome}\n\n`{old}` -> `{new}`: {len(flagged)} of {len(frame)} compared "
            f"values flagged beyond {tolerance:.0%}\n\n{table}\n")


def comparison_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows for the report's comparison section: stage, metric label, old, new, change, flagged, note."""
    out = []
    for r in tuples(frame):
        col = _COLUMNS.get(r.metric)
        out.append({"stage": r.stage, "metric": col.label if col else r.metric,
                    "old": _cell(r.old, r.unit, r.metric), "new": _cell(r.new, r.unit, r.metric),
                    "change": fmt_change(r.change, r.old),
                    "flagged": bool(r.flagged), "note": r.note})
    return out
