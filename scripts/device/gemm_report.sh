#!/usr/bin/env bash
# On the GPU machine: the GEMM's live report at 4096^3 (compute-sanitizer, validation, timing,
# peers, ncu --set full on one launch per stage and the cuBLAS ceiling), then the CPU fixture at
# 1024^3 (no peers, no sanitizer: the capture and its sidecars), both under OUTDIR.
# usage: bash scripts/device/gemm_report.sh OUTDIR
set -o pipefail
out=${1:?usage: gemm_report.sh OUTDIR}
mkdir -p "$out"
make report CASE=gemm OUT="$out/h200-gemm" 2>&1 | tee "$out/make_report.log"
python3 -m profiler_report run --case gemm --size m=1024 --size n=1024 --size k=1024 --no-peers --no-sanitize \
  --out "$out/h200_gemm_f32_1024" 2>&1 | tee "$out/fixture.log"
