#!/usr/bin/env bash
# On the GPU machine: the bf16 GEMM's live report at 8192^3 (compute-sanitizer, validation, timing,
# peers, ncu --set full on one launch per stage and the cuBLAS ceiling) under OUTDIR.
# usage: bash scripts/device/hgemm_report.sh OUTDIR
set -o pipefail
out=${1:?usage: hgemm_report.sh OUTDIR}
mkdir -p "$out"
make report CASE=hgemm OUT="$out/h200-hgemm" 2>&1 | tee "$out/make_report.log"
