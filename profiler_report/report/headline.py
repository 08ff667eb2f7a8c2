"""What a reader meets first: the ladder in one sentence, the table of contents, and which timing
run each GB/s of the page comes from."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler_report.metrics import ratio
from profiler_report.util.fmt import column_decimals, fmt

if TYPE_CHECKING:
    from profiler_report.report.page import Page


#: A case's work unit (Case.work_unit) -> the summary columns that state a stage's speed in it, in
#: order of preference, with how the headline names each, and the column of its % of the ceiling.
SPEED_COLUMNS = {
    "GB/s": ((("event_gbps", "GB/s event-timed"), ("dram_throughput_gbps", "GB/s DRAM throughput (ncu)")),
             "pct_of_memcpy", "memcpy"),
    "TFLOP/s": ((("event_tflops", "TFLOP/s event-timed"),), "pct_of_copy_kernel", "the ceiling"),
}


def _speed(row: pd.Series, work_unit: str = "GB/s") -> tuple[str, float]:
    """A stage's figure of speed in the case's work unit, as (how it is named, value): GB/s
    event-timed, else ncu's DRAM throughput; TFLOP/s event-timed."""
    for col, unit in SPEED_COLUMNS[work_unit][0]:
        v = float(row.get(col, math.nan))
        if math.isfinite(v):
            return unit, v
    return "", math.nan


def headline(summary: pd.DataFrame, wrong: frozenset[str] = frozenset(), work_unit: str = "GB/s") -> str:
    """The whole ladder in one sentence: the first and the last stage's speed in the case's work
    unit (event-timed GB/s, else ncu's DRAM throughput, with % of memcpy where timed; or
    event-timed TFLOP/s with % of the ceiling), the ratio between them, and the largest step (the
    previous stage's figure over this one's). "" with fewer than two stages or no speed; a stage
    that failed validation ends the claim there."""
    stages = summary[(summary["role"] == "stage") & ~summary["stage"].isin(wrong)].reset_index(drop=True)
    if len(stages) < 2:
        return ""
    first, last = stages.iloc[0], stages.iloc[-1]
    (unit, a), (_, b) = _speed(first, work_unit), _speed(last, work_unit)
    if not unit or not math.isfinite(b):
        return ""
    d = column_decimals([a, b], work_unit)
    _, pct_col, of = SPEED_COLUMNS[work_unit]
    pct = pct_col in stages and math.isfinite(float(last.get(pct_col, math.nan)))

    def one(row: pd.Series, v: float) -> str:
        share = f", {fmt(row[pct_col], '%')} of {of}" if pct else ""
        return f"{fmt(v, decimals=d)} {unit.split(' ')[0]} ({row['stage']}{share})"

    steps = [(ratio(_speed(stages.iloc[i], work_unit)[1], _speed(stages.iloc[i - 1], work_unit)[1]),
              stages.iloc[i]["stage"])
             for i in range(1, len(stages))]
    steps = [s for s in steps if math.isfinite(s[0])]
    text = (f"{len(stages)} stages take the kernel from {one(first, a)} to {one(last, b)}: "
            f"{ratio(b, a):.2f}x")
    if steps:
        best = max(steps)
        text += f"; the largest step is {best[1]} ({best[0]:.2f}x)"
    run = ", the timing run (timings.json)" if unit.endswith("event-timed") else ""
    return text + f". Figures: {unit.split(' ', 1)[1]}{run}."


def peers_run_note(summary: pd.DataFrame, bench: list[dict[str, Any]]) -> str:
    """Which run the peers table's GB/s come from, against the summary's: the stages timed in
    both, the largest difference between the two runs and where. "" when no stage is in both."""
    if "event_gbps" not in summary:
        return ""
    ours = {r["stage"]: float(r["event_gbps"]) for _, r in summary.iterrows()
            if math.isfinite(float(r["event_gbps"])) and float(r["event_gbps"]) > 0}
    theirs = {r["name"]: float(r["gbps"]) for r in bench
              if r.get("kind") in ("stage", "ceiling") and r.get("gbps") is not None and r["gbps"] == r["gbps"]}
    both = [n for n in ours if n in theirs]
    if not both:
        return ""
    worst = max(both, key=lambda n: abs(theirs[n] / ours[n] - 1) if ours[n] else 0.0)
    d = column_decimals([ours[worst], theirs[worst]], "GB/s")
    return (f"GB/s here come from the peer run (bench.json), timed separately from the timing run whose figures the "
            f"summary shows (timings.json); the same kernel differs between the two runs by up to "
            f"{abs(theirs[worst] / ours[worst] - 1):.1%} ({worst}: {fmt(ours[worst], decimals=d)} in the summary, "
            f"{fmt(theirs[worst], decimals=d)} here), the run-to-run spread.")


def table_of_contents(page: Page) -> list[tuple[str, str]]:
    """(anchor id, title) of every section the page shows, in page order.
    A section added to the template is added here too (the browser test checks every link resolves)."""
    toc = [("environment", "Where these numbers come from"), ("summary", "Summary")]
    if page.roofline is not None:
        toc.append((page.roofline.anchor, page.roofline.title))
    if page.comparison:
        toc.append(("comparison", "Compared with the baseline"))
    if page.peers_rows:
        toc.append(("peers", "Versus peers"))
    if page.sweep_rows:
        toc.append(("sweep", "Sweep: sizes and dtypes"))
    if page.shapes_rows:
        toc.append(("shapes", "Block-shape sweep"))
    toc += [(f"experiment-{x.id}", x.title) for x in page.experiments]
    if page.claims:
        toc.append(("claims", "The source articles' claims"))
    toc += [(f"stage-{s.id}", f"Stage {i}: {s.id}") for i, s in enumerate(page.stages, 1)]
    if page.validation:
        toc.append(("validation", "Correctness checks"))
    if page.sanitizer_rows:
        toc.append(("sanitizer", "compute-sanitizer"))
    toc.append(("sources", "Metric sources"))
    return toc
