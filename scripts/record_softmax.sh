#!/usr/bin/env bash
# Record the Python ladder examples/softmax live, on a GPU machine with CuPy, PyTorch, Triton and
# Nsight Compute, from the repository root:
#   bash scripts/record_softmax.sh
# It runs `make report CASE=examples/softmax` in float32 and bfloat16 (each stage validated and
# event-timed at 32768x4096, one call per stage profiled with ncu --set full --import-source yes
# --clock-control none at 8192x4096, 128 MiB of float32, past the 60 MB L2; torch.softmax timed
# beside them) and writes
#   reports/h200-softmax/        the float32 report folder (index.html, profile.ncu-repz, ...)
#   reports/h200-softmax-bf16/   the bfloat16 one
# Each capture is kept as profile.ncu-repz, ncu's zstd-compressed report (about 45 MB -> 1.7 MB:
# every PyTorch kernel's result embeds its whole module's cubin), and the page is rendered again
# from it. The float32 folder is the CPU tests' fixture (tests/cases/test_softmax_fixture.py).
# (scripts/keep_compressed.sh). Without zstd on the GPU machine, run that script on the folders
# afterwards on any machine.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

record() {  # record OUT ARGS...: make report into OUT, then keep its capture compressed
  local out=$1; shift
  make -s report CASE=examples/softmax OUT="$out" PYTHON="$PY" ARGS="--profile-size rows=8192 $*" 2>&1 | tee "$out.log"
  mv "$out.log" "$out/make_report.log"
  if command -v zstd >/dev/null; then bash scripts/keep_compressed.sh "$out" "$PY"; fi
}
record reports/h200-softmax
record reports/h200-softmax-bf16 --dtype bfloat16
echo "wrote reports/h200-softmax/ and reports/h200-softmax-bf16/"
