#!/usr/bin/env bash
# On the GPU machine: the bf16 GEMM's live report at 8192^3 (compute-sanitizer, validation, timing,
# peers, ncu --set full on one launch per stage and the cuBLAS ceiling) under OUTDIR/<gpu>-<case> (h200, h100: the card it ran on), its capture
# then kept compressed (scripts/keep_compressed.sh, where zstd is installed; else run that script
# on the folder afterwards). The folder is the CPU tests' fixture (tests/cases/test_gemm_fixture.py).
# usage: bash scripts/device/hgemm_report.sh OUTDIR
set -o pipefail
out=${1:?usage: hgemm_report.sh OUTDIR}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o "H[0-9]*" | tr H h)
make report CASE=hgemm OUT="$out/${gpu:-gpu}-hgemm" 2>&1 | tee "$out/make_report.log"
if command -v zstd >/dev/null; then bash scripts/keep_compressed.sh "$out/${gpu:-gpu}-hgemm"; fi
