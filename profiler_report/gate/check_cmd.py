"""The ``check`` command's work: gate a run on a thresholds file and print the outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from profiler_report.analysis.cli_args import ladder, one_or_many, warn_not_comparable


def run_check(captures: tuple[Path, ...], thresholds_path: Path | None, baseline: Path | None, missing: str,
              junit: Path | None, fmt: str, strict: bool, ladder_opts: dict[str, Any]) -> int:
    """Print the check of ``captures`` (one ladder) in ``fmt``, write ``junit`` when given; the
    exit code: 0 every rule passes, 1 one fails (:func:`profiler_report.gate.exit_code`).

    Raises:
        InputError (a bad thresholds file, before any capture is read; not comparable with ``strict``).
    """
    from profiler_report import gate
    from profiler_report.analysis.compare import require_comparable, run_identity
    from profiler_report.analysis.run import load_run, refuse_mixed, reused_run
    from profiler_report.gate.choose import given_thresholds, own_thresholds
    from profiler_report.gate.writers import CHECK, CheckOutcome

    thresholds = given_thresholds(thresholds_path, ladder_opts["case_ref"])  # a bad file fails before the read
    allow_mixed = ladder_opts.pop("allow_mixed")
    kw = ladder(**ladder_opts)
    capture = one_or_many(captures)
    run = reused_run(capture, kw)[0] or load_run(capture, **kw)  # a run that reused captures: all
    refuse_mixed(run, allow_mixed)
    thresholds = thresholds or own_thresholds(run)
    base = load_run(baseline, **kw) if baseline is not None else None
    diffs = require_comparable(base, run, strict) if base is not None else []
    if baseline is not None:
        warn_not_comparable(baseline, capture, diffs)
    results = gate.check_run(thresholds, run, base)
    code = gate.exit_code(results, missing)
    outcome = CheckOutcome(results, missing, code, " ".join(str(c) for c in captures), thresholds.path,
                           str(baseline) if baseline else None, diffs, run_identity(run.capture, run.provenance))
    if junit is not None:
        meta = {"capture": outcome.capture, "thresholds": outcome.thresholds, "baseline": outcome.baseline}
        gate.write_junit(junit, results, missing, {k: str(v) for k, v in meta.items() if v})
    click.echo(CHECK[fmt].write(outcome), nl=False)
    return code
