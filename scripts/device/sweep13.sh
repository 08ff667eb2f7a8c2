#!/usr/bin/env bash
# Issue 13: the full transpose bench sweep on one GPU (H200), resumable across device calls.
#
#   PYTHONPATH=/tmp/site:$PWD bash scripts/device/sweep13.sh        # from the repo root; OUT set
#
# Runs `profiler-report bench` (every stage, the copy ceilings, every peer and vec_realigned at each
# candidate configuration, at every size x dtype of SWEEP_SIZES; the block-shape sweep at the
# headline sizes; 47 points) under `timeout` (SWEEP13_LIMIT_S, default 520 s), so that one device
# call of 9 minutes never loses the points that finished: they are kept in
# reports/sweep13.partial/bench.json.points/ (git-ignored, so it stays on a warm machine between
# calls; on a fresh machine pass it back with `carry`). Run the same command again until it
# prints "sweep complete" (commit nothing between the calls: the commit is part of each point's key,
# unless PROFILER_REPORT_COMMIT is set). No clocks, power or MIG settings are touched (no profiler runs).
#
# Writes under $OUT/:
#   sweep.json      the bench JSON, when every point is done  -> commit as reports/h200/sweep.json
#   bench.txt       everything bench printed: one progress line per point (with its seconds), the
#                   table, the block-shape and sweep verdicts  -> reports/h200/bench-sweep.txt
#                   (the console shows only the progress, verdict and warning lines)
#   bench.err       warnings and failed points
#   points/         every finished point so far (copy back into reports/sweep13.partial/bench.json.points/
#                   to resume on a fresh machine)
#   wall_s.txt      this call's wall time
#   gpu_tests.txt   with SWEEP13_TESTS=1: the sweep's GPU tests (tests/cases/test_transpose_gpu.py), run first
#
# Measured on the H200 (2026-12-01): 99-205 s for all 47 points in one call (estimated 7-8 minutes: the timed
# launches are ~10 s in all; most of it is torch.compile compiling one static kernel per point,
# 42 compiles of ~3-5 s, NVRTC building the ladder with the candidates once per dtype, and the
# inputs); if the first call stops at the limit, a second call finishes the rest.
set -euo pipefail
: "${OUT:?set OUT to the folder for the results}"
WORK=reports/sweep13.partial
mkdir -p "$WORK" "$OUT"
# One key for the point store in every call, whether or not the copy of the tree has a .git.
export PROFILER_REPORT_COMMIT="${PROFILER_REPORT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo sweep13)}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
start=$(date +%s)
if [ "${SWEEP13_TESTS:-0}" = 1 ]; then  # opt-in, ~1 min: the GPU tests of this sweep first
  python3 -m pytest -q -p no:cacheprovider tests/cases/test_transpose_gpu.py -k "candidate_configurations or sweep_point" \
    2>&1 | tee "$OUT/gpu_tests.txt" | tail -n 5 || echo "GPU tests failed: see $OUT/gpu_tests.txt (the sweep runs anyway)"
fi
# A few seconds of copies first: in a sweep straight after the machine started, the first DRAM
# points (float16 4096x4096, 2048x8192) had memcpy and the copy kernels at 68-77 % of their later
# figures and the stages 20-30 % low (2026-12-01); with this warm-up they matched the other points.
python3 -c "
import time, cupy
a = cupy.empty(1 << 28, dtype=cupy.uint8); b = cupy.empty_like(a); t = time.time()
while time.time() - t < 8: b[...] = a
cupy.cuda.runtime.deviceSynchronize()" || echo "warm-up failed (the sweep runs anyway)"
set +e
timeout -s INT -k 30 "${SWEEP13_LIMIT_S:-520}" python3 -m profiler_report bench --out "$WORK/bench.json" \
  > >(tee "$OUT/bench.txt" | grep --line-buffered -E '^(point |warning|wrote |sweep: |block-shape )') \
  2> >(tee "$OUT/bench.err" >&2)
rc=$?
set -e
wall=$(( $(date +%s) - start ))
echo "$wall" >"$OUT/wall_s.txt"
rm -rf "$OUT/points" && cp -r "$WORK/bench.json.points" "$OUT/points" 2>/dev/null || true
done_points=$( (find "$OUT/points" -name "*.json" 2>/dev/null || true) | wc -l)
if [ "$rc" -eq 0 ] && [ -f "$WORK/bench.json" ]; then
  cp "$WORK/bench.json" "$OUT/sweep.json"
  echo "sweep complete: $done_points points, $OUT/sweep.json; wall time ${wall} s"
else
  echo "sweep stopped (exit $rc) with $done_points points kept; run the same command again to resume; wall time ${wall} s"
fi
