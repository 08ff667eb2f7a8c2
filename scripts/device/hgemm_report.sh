#!/usr/bin/env bash
# On the GPU machine: the bf16 GEMM's live report at 8192^3 under OUTDIR/<card>-hgemm
# (scripts/device/case_report.sh). The folder is the CPU tests' fixture (tests/cases/test_gemm_fixture.py).
# usage: bash scripts/device/hgemm_report.sh OUTDIR
exec bash "$(dirname "$0")/case_report.sh" hgemm "${1:?usage: hgemm_report.sh OUTDIR}"
