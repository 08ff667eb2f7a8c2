#!/usr/bin/env bash
# `make report`: a live run where there is a GPU, CuPy and Nsight Compute; otherwise render the
# recorded H200 capture committed under reports/ and say so plainly.
# CASE picks the case: a built-in name (transpose, the default) or a case folder's path
# (`profiler-report new-case DIR` makes one); it is passed to `run --case`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
CASE=${CASE:-}

# Use this Python as it is when it already has what the tool needs (a GPU box with its own
# stack and no package index, for example); otherwise install into the virtual environment.
if PYTHONPATH=$PWD "$PYTHON" -c "import pandas, jinja2, matplotlib, pygments, click
from profiler_report.capture import ncu_module as _ncu
assert _ncu.available()" 2>/dev/null; then
  PY=$PYTHON
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
else
  make -s venv PYTHON="$PYTHON" VENV="$VENV"
  PY=$VENV/bin/python
fi

case_args=()
if [ -n "$CASE" ]; then case_args=(--case "$CASE"); fi

missing=""
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || missing="$missing an NVIDIA GPU,"
"$PY" -c "import cupy" 2>/dev/null || missing="$missing CuPy,"
"$PY" -c "from profiler_report.live.ncu import find_ncu; find_ncu()" 2>/dev/null || missing="$missing Nsight Compute (ncu),"

if [ -z "$missing" ]; then
  # shellcheck disable=SC2086
  exec "$PY" -m profiler_report run ${case_args[@]+"${case_args[@]}"} ${OUT:+--out "$OUT"} ${ARGS:-}
fi
echo "No live run here: missing${missing%,} (\`$PY -m profiler_report doctor\` says what to fix)."
if [ -z "$CASE" ] || [ "$CASE" = transpose ]; then
  recorded=reports/h200 out=${OUT:-reports/h200-recorded}
else
  # The case's own name (stages.toml `name`, as a live run names its folder), not the folder's: an
  # unknown case is that, not a missing recording, and gets the tool's own one-line error.
  name=$("$PY" -c "import sys
from profiler_report.model.registry import get_case
from profiler_report.errors import ProfilerReportError
try:
    print(get_case(sys.argv[1]).name)
except ProfilerReportError as exc:
    print(exc.one_line(), file=sys.stderr)
    sys.exit(exc.exit_code)" "$CASE")
  recorded=reports/h200-$name out=${OUT:-reports/h200-$name-recorded}
fi
if [ ! -f "$recorded/profile.ncu-rep" ]; then
  echo "error: no recorded capture of case $CASE in $recorded/ to render instead (fix: run \`make report CASE=$CASE\` on a GPU machine)" >&2
  exit 8
fi
echo "Rendering the RECORDED H200 capture in $recorded/ into $out/ instead (not a live run; the"
echo "report says so at the top).${ARGS:+ ARGS ($ARGS) apply to live runs only and are ignored.}"
exec "$PY" -m profiler_report render --from "$recorded/profile.ncu-rep" --out "$out" ${case_args[@]+"${case_args[@]}"}
