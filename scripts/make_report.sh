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
gpu=""
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && gpu=1
if PYTHONPATH=$PWD "$PYTHON" -c "import pandas, jinja2, matplotlib, pygments, click
from profiler_report.capture import ncu_module as _ncu
assert _ncu.available()" 2>/dev/null; then
  PY=$PYTHON
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
elif [ -n "$gpu" ]; then
  make -s venv-gpu PYTHON="$PYTHON" VENV="$VENV"
  PY=$VENV/bin/python
else
  # Rendering a recorded capture needs the package alone, not the test tool chain (Playwright,
  # Dask, NVRTC) nor CuPy.
  [ -f "$VENV/.installed" ] || [ -f "$VENV/.installed-render" ] || \
    echo "make report: no GPU here: installing only what rendering needs into $VENV (the package, without the test extras)"
  make -s venv-render PYTHON="$PYTHON" VENV="$VENV"
  PY=$VENV/bin/python
fi

case_args=()
if [ -n "$CASE" ]; then case_args=(--case "$CASE"); fi

missing=""
[ -n "$gpu" ] || missing="$missing an NVIDIA GPU,"
"$PY" -c "import cupy" 2>/dev/null || missing="$missing CuPy,"
"$PY" -c "from profiler_report.live.ncu import find_ncu; find_ncu()" 2>/dev/null || missing="$missing Nsight Compute (ncu),"

if [ -z "$missing" ]; then
  # shellcheck disable=SC2086
  exec "$PY" -m profiler_report run ${case_args[@]+"${case_args[@]}"} ${OUT:+--out "$OUT"} ${ARGS:-}
fi
echo "No live run here: missing${missing%,} (\`$PY -m profiler_report doctor\` says what to fix)."
recorded=$(bash scripts/recorded_report.sh "$PY" "$CASE")
out=${OUT:-$recorded-recorded}
cap=$(bash scripts/report_capture.sh "$recorded")
if [ ! -f "$cap" ]; then
  echo "error: no recorded capture of case $CASE in $recorded/ to render instead (fix: run \`make report CASE=$CASE\` on a GPU machine)" >&2
  exit 8
fi
echo "Rendering the RECORDED H200 capture in $recorded/ into $out/ instead (not a live run; the"
echo "report says so at the top).${ARGS:+ ARGS ($ARGS) apply to live runs only and are ignored.}"
exec "$PY" -m profiler_report render --from "$cap" --out "$out" ${case_args[@]+"${case_args[@]}"}
