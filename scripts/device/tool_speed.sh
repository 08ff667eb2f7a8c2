#!/usr/bin/env bash
# The tool's own speed on a GPU (H200), most wanted first, each step bounded so that one device
# call returns whatever finished:
# Everything comes back as $OUT/res.tgz.
#   1. scripts/bench_tool.py (TOOL_SPEED_CASES, default transpose: a cold run with an empty result
#      cache, a one-stage edit, render --from)              -> $OUT/tool-speed.json, $OUT/bench-tool/
#   2. run at the odd shapes the bench sweep chooses configurations for (8191x8193 float16,
#      16384x16384 float64; --no-counters, peers on; TOOL_SPEED_ODD=0 skips them)
#                                                        -> $OUT/odd-<shape>/{bench,timings,reuse}.json
#   3. the GPU tests of the result cache, the configuration choice, the reduction's reference and
#      the sanitizer, and the files in TOOL_SPEED_MORE_TESTS (TOOL_SPEED_TESTS=0 skips them)
#                                                        -> $OUT/gpu_tests.txt
# From the repo root with PYTHONPATH set (nvtx); `ncu --clock-control none` (the tool's default):
# no clocks, power or MIG settings are touched.
set -uo pipefail
: "${OUT:?set OUT}"
FINAL=$OUT
OUT=/tmp/tool-speed-out  # gathered here; $FINAL/res.tgz is rewritten after every step (a time-out keeps it)
mkdir -p "$OUT"
snap() { tar czf "$FINAL/res.tgz.tmp" -C "$OUT" . && mv "$FINAL/res.tgz.tmp" "$FINAL/res.tgz"; }
export PYTHONUNBUFFERED=1 PROFILER_REPORT_COMMIT=${PROFILER_REPORT_COMMIT:-unknown}
PY=${PYTHON:-python3}
cases=${TOOL_SPEED_CASES:-transpose}
mkdir -p "$OUT/bench-tool"
timeout "${TOOL_SPEED_BENCH_S:-300}" "$PY" scripts/bench_tool.py --cases "$cases" --out "$OUT/tool-speed.json" \
  --work /tmp/bench-tool > "$OUT/bench-tool/bench_tool.txt" 2>&1
echo "bench_tool: exit $?" | tee -a "$OUT/steps.txt"
cp /tmp/bench-tool/*.log "$OUT/bench-tool/" 2>/dev/null
for d in /tmp/bench-tool/*-cold /tmp/bench-tool/*-edit; do
  [ -d "$d" ] && mkdir -p "$OUT/bench-tool/$(basename "$d")" && \
    cp "$d"/{reuse.json,timings.json,profile-parts.json,sanitizer.json} "$OUT/bench-tool/$(basename "$d")/" 2>/dev/null
done
snap
shapes=("8191 8193 float16" "16384 16384 float64")
[ "${TOOL_SPEED_ODD:-1}" = 0 ] && shapes=()
for shape in "${shapes[@]}"; do
  set -- $shape
  name=odd-$1x$2-$3
  timeout "${TOOL_SPEED_ODD_S:-120}" "$PY" -m profiler_report run --rows "$1" --cols "$2" --dtype "$3" --no-counters \
    --out "/tmp/$name" > "/tmp/$name.log" 2>&1
  echo "$name: exit $?" | tee -a "$OUT/steps.txt"
  mkdir -p "$OUT/$name" && cp "/tmp/$name.log" "/tmp/$name"/{bench.json,timings.json,reuse.json} "$OUT/$name/" 2>/dev/null
  snap
done
if [ "${TOOL_SPEED_TESTS:-1}" != 0 ]; then
  timeout "${TOOL_SPEED_TESTS_S:-150}" "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/live/test_cache_gpu.py \
    tests/cases/test_reduction_gpu.py tests/live/test_sanitizer_gpu.py ${TOOL_SPEED_MORE_TESTS:-} > "$OUT/gpu_tests.txt" 2>&1
  echo "gpu tests: exit $?" | tee -a "$OUT/steps.txt"
  snap
fi
