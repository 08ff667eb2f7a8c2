#!/usr/bin/env bash
# On the GPU machine: the GEMM's live report at 4096^3 under OUTDIR/<card>-gemm
# (scripts/device/case_report.sh). The folder is the CPU tests' fixture (tests/cases/test_gemm_fixture.py).
# usage: bash scripts/device/gemm_report.sh OUTDIR
exec bash "$(dirname "$0")/case_report.sh" gemm "${1:?usage: gemm_report.sh OUTDIR}"
