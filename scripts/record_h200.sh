#!/usr/bin/env bash
# Re-record the committed H200 captures (tests/data and the regression fixture).
# Pass ONLY=NAME to record one of them.
# Run on a GPU machine with Nsight Compute, from the repository root:
#   bash scripts/record_h200.sh OUTDIR
# Each capture: ncu --set full --import-source yes --clock-control none, one launch per stage,
# selected by NVTX range; plus the raw-page CSV export of the same capture.
set -euo pipefail
out=${1:?usage: record_h200.sh OUTDIR}
mkdir -p "$out"
ncu=${NCU:-ncu}
rec_case() {  # rec_case NAME CASE SIZE_JSON DTYPE STAGES...
  local name=$1 case=$2 size=$3 dtype=$4; shift 4
  if [ -n "${ONLY:-}" ] && [ "$ONLY" != "$name" ]; then return 0; fi
  local ranges=() st
  for st in "$@"; do ranges+=(--nvtx-include "pr_${case}.${st%%:*}/"); done
  mkdir -p "$out/$name"
  "$ncu" --set full --import-source yes --clock-control none --force-overwrite --nvtx "${ranges[@]}" \
    --export "$out/$name/profile" \
    python3 -m profiler_report.live.target profile --case "$case" --size "$size" --dtype "$dtype" \
      --stages "$(IFS=,; echo "$*")" > "$out/$name/ncu.log" 2>&1
  "$ncu" --import "$out/$name/profile.ncu-rep" --csv --page raw > "$out/$name/raw.csv"
  "$ncu" --import "$out/$name/profile.ncu-rep" --csv --page details > "$out/$name/details.csv"
  "$ncu" --version > "$out/$name/ncu-version.txt"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/$name/gpu.txt"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$out/$name/date.txt"
}
rec() {  # rec NAME ROWS COLS DTYPE STAGES... (the transpose)
  local name=$1 rows=$2 cols=$3 dtype=$4; shift 4
  rec_case "$name" transpose "{\"rows\": $rows, \"cols\": $cols}" "$dtype" "$@"
}
rec h200_f32_4096 4096 4096 float32 naive smem padded unrolled vec_padded vec_swizzled vec_deep vec_colwalk copy || echo "recording h200_f32_4096 failed: see $out/h200_f32_4096/ncu.log"
rec h200_f32_4096_regressed 4096 4096 float32 naive smem padded unrolled:unrolled_nopad copy || echo "recording h200_f32_4096_regressed failed: see $out/h200_f32_4096_regressed/ncu.log"
rec h200_f64_2048 2048 2048 float64 naive smem padded unrolled vec_padded vec_swizzled vec_deep vec_colwalk copy || echo "recording h200_f64_2048 failed: see $out/h200_f64_2048/ncu.log"
red="interleaved_divergent interleaved_strided sequential first_add warp_shuffle unrolled grid_stride vec4 one_pass one_pass_deep read_ceiling"
# shellcheck disable=SC2086
rec_case h200_reduction_f32_2p26 reduction '{"n": 67108864}' float32 $red || echo "recording h200_reduction_f32_2p26 failed: see $out/h200_reduction_f32_2p26/ncu.log"
