#!/usr/bin/env bash
# The committed report folder of a case, for `make report` (what it renders without a GPU) and
# `make check` (what it gates by default): reports/h200 for the transpose (CASE empty or
# "transpose"), reports/<gpu>-<name> for another case (h200, else h100: the GPU it was recorded
# on), <name> the case's own (a case folder's case.py `name`, as a live run names its folder).
# Usage: recorded_report.sh PYTHON CASE
set -euo pipefail
PY=$1
CASE=${2:-}
if [ -z "$CASE" ] || [ "$CASE" = transpose ]; then
  echo reports/h200
  exit 0
fi
# An unknown case is that, not a missing recording: the tool's own one-line error and exit code.
name=$("$PY" -c "import sys
from profiler_report.model.registry import get_case
from profiler_report.errors import ProfilerReportError
try:
    print(get_case(sys.argv[1]).name)
except ProfilerReportError as exc:
    print(exc.one_line(), file=sys.stderr)
    sys.exit(exc.exit_code)" "$CASE")
for gpu in h200 h100; do
  if [ -d "reports/$gpu-$name" ]; then echo "reports/$gpu-$name"; exit 0; fi
done
echo "reports/h200-$name"
