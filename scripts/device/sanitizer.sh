#!/usr/bin/env bash
# The compute-sanitizer gate on a GPU (issue 14): runs its GPU tests and keeps the raw tool output
# the CPU tests parse. From the repository root, on a machine with a GPU, CuPy and the CUDA
# toolkit's compute-sanitizer:
#   OUT=/some/dir PYTHONPATH=/tmp/site:$PWD bash scripts/device/sanitizer.sh
# Expected wall time on the H200: 4-8 minutes (9 tool processes at 67x133 / n=8911, each a Python
# start, an NVRTC build and every stage once under instrumentation; plus a 1024x1024 live run).
# Writes, under $OUT/sanitizer/:
#   broken-{memcheck,racecheck,synccheck}.log     tests/data/sanitizer/broken_case under each tool
#   transpose-{memcheck,racecheck,synccheck}.log  every transpose stage + copy (the live run's)
#   reduction-{memcheck,racecheck,synccheck}.log  every reduction stage + ceiling
#   pytest.log, compute-sanitizer-version.txt, gpu.txt, date.txt
# Commit the *.log files (and the three .txt) into tests/data/sanitizer/; tests/live/test_sanitizer.py
# then parses them (its real-output tests skip until they are there).
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the results}"
dest="$OUT/sanitizer"
mkdir -p "$dest"
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || ls -d /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)}
"$cs" --version > "$dest/compute-sanitizer-version.txt" 2>&1 || echo "compute-sanitizer not found" > "$dest/compute-sanitizer-version.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$dest/gpu.txt" 2>&1 || true
date -u +%Y-%m-%dT%H:%M:%SZ > "$dest/date.txt"
SANITIZER_LOGS_OUT="$dest" python3 -m pytest -q -p no:cacheprovider -m gpu tests/live/test_sanitizer_gpu.py -rA \
  > "$dest/pytest.log" 2>&1
status=$?
tail -n 40 "$dest/pytest.log"
# The CPU tests on the logs just written (copied to a scratch tree so the repository stays clean).
tmp=$(mktemp -d)
cp -r . "$tmp/repo" 2>/dev/null
cp "$dest"/*.log "$tmp/repo/tests/data/sanitizer/" 2>/dev/null
(cd "$tmp/repo" && python3 -m pytest -q -p no:cacheprovider tests/live/test_sanitizer.py -k "recorded or racecheck_output or synccheck_output" -rA) \
  > "$dest/pytest-cpu-on-logs.log" 2>&1
tail -n 15 "$dest/pytest-cpu-on-logs.log"
rm -rf "$tmp"
exit $status
