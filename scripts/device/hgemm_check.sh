#!/usr/bin/env bash
# On the GPU machine: the bf16 GEMM's GPU tests (every stage and cuBLAS at odd and tile-multiple
# sizes), then the benchmark at 8192^3 (stages, cuBLAS, torch.compile, Triton), no ncu.
# usage: bash scripts/device/hgemm_check.sh OUTDIR
set -o pipefail
out=${1:?usage: hgemm_check.sh OUTDIR}
mkdir -p "$out"
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/cases/test_hgemm_gpu.py 2>&1 | tee "$out/gpu_tests.log"
timeout 120 python3 -m profiler_report bench --case hgemm --quick --out "$out/bench.json" 2>&1 | tee "$out/bench.log"
