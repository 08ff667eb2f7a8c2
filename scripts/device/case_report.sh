#!/usr/bin/env bash
# On the GPU machine: CASE's live report (compute-sanitizer, validation, timing, peers, ncu --set
# full on one launch per stage and the ceiling) under OUTDIR/<card>-<CASE> (h200, h100: the card it
# ran on), its capture then kept compressed (scripts/keep_compressed.sh, where zstd is installed;
# else run that script on the folder afterwards).
# usage: bash scripts/device/case_report.sh CASE OUTDIR
set -o pipefail
case=${1:?usage: case_report.sh CASE OUTDIR}
out=${2:?usage: case_report.sh CASE OUTDIR}
mkdir -p "$out"
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o "H[0-9][0-9]*" | head -1 | tr H h)
folder="$out/${card:-gpu}-$case"
make report CASE="$case" OUT="$folder" 2>&1 | tee "$out/make_report.log"
if command -v zstd >/dev/null; then bash scripts/keep_compressed.sh "$folder"; fi
