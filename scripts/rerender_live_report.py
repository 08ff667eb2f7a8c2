"""Re-render a live report folder from its own files, after a change to the page (template,
analysis wording), with no GPU: ``python scripts/rerender_live_report.py reports/h200``.

Every number comes from the files the live run wrote there (profile.ncu-rep or its compressed
profile.ncu-repz, timings.json,
validation.json, provenance.json, bench.json, sweep.json); the page stays a live run's page (it
was measured in that run) and its "rendered" line gets today's date. Rewrites index.html,
summary.csv and summary.json only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from profiler_report.errors import ProfilerReportError
from profiler_report.report.build import render_capture


def main(argv: list[str]) -> int:
    found = [Path(argv[0]) / f"profile.{ext}" for ext in ("ncu-rep", "ncu-repz")] if len(argv) == 1 else []
    found = [p for p in found if p.is_file()]
    if not found:
        print("usage: python scripts/rerender_live_report.py REPORT_FOLDER (holding profile.ncu-rep or "
              "profile.ncu-repz)", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    try:
        _, files, _ = render_capture(found[0], folder, live=True, capture_label=str(found[0]))
    except ProfilerReportError as exc:  # the CLI's one-line error and exit code
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    for f in files:
        print(f"wrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
