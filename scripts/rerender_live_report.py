"""Re-render a live report folder from its own files, after a change to the page (template,
analysis wording), with no GPU: ``python scripts/rerender_live_report.py reports/h200``.

Every number comes from the files the live run wrote there (profile.ncu-rep, timings.json,
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
    if len(argv) != 1 or not (Path(argv[0]) / "profile.ncu-rep").is_file():
        print("usage: python scripts/rerender_live_report.py REPORT_FOLDER (holding profile.ncu-rep)", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    try:
        _, files, _ = render_capture(folder / "profile.ncu-rep", folder, live=True,
                                     capture_label=str(folder / "profile.ncu-rep"))
    except ProfilerReportError as exc:  # the CLI's one-line error and exit code
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    for f in files:
        print(f"wrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
