#!/usr/bin/env bash
# On the GPU machine: the GEMM's GPU tests (every stage and swept shape at odd and tile-multiple
# sizes), then the benchmark at 4096^3 (stages, cuBLAS, peers, the warptile shape sweep), no ncu.
# usage: bash scripts/device/gemm_check.sh OUTDIR
set -o pipefail
out=${1:?usage: gemm_check.sh OUTDIR}
mkdir -p "$out"
python3 -m pytest -q -x -p no:cacheprovider tests/cases/test_gemm_gpu.py 2>&1 | tee "$out/gpu_tests.log"
python3 -m profiler_report bench --case gemm --quick --out "$out/bench.json" 2>&1 | tee "$out/bench.log"
