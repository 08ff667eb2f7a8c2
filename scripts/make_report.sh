#!/usr/bin/env bash
# `make report`: a live run where there is a GPU, CuPy and Nsight Compute; otherwise render the
# recorded H200 capture committed under reports/h200/ and say so plainly.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# Use this Python as it is when it already has what the tool needs (a GPU box with its own
# stack and no package index, for example); otherwise install into the virtual environment.
if PYTHONPATH=$PWD "$PYTHON" -c "import pandas, jinja2, matplotlib, pygments, click" 2>/dev/null; then
  PY=$PYTHON
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
else
  make -s venv PYTHON="$PYTHON" VENV="$VENV"
  PY=$VENV/bin/python
fi

live=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 \
   && "$PY" -c "import cupy" 2>/dev/null \
   && "$PY" -c "from profiler_report.profile import find_ncu; find_ncu()" 2>/dev/null; then
  live=1
fi

if [ "$live" = 1 ]; then
  # shellcheck disable=SC2086
  exec "$PY" -m profiler_report run ${OUT:+--out "$OUT"} ${ARGS:-}
fi
out=${OUT:-reports/h200-recorded}
echo "No GPU with CuPy and Nsight Compute here: rendering the RECORDED H200 capture in reports/h200/"
echo "(not a live run; the report says so at the top) into $out/"
exec "$PY" -m profiler_report render --from reports/h200/profile.ncu-rep --out "$out"
