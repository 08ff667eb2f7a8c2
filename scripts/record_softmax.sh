#!/usr/bin/env bash
# Record the Python ladder examples/softmax live, on a GPU machine with CuPy, PyTorch, Triton and
# Nsight Compute, from the repository root:
#   bash scripts/record_softmax.sh
# It runs `make report CASE=examples/softmax` in float32 and bfloat16 (each stage validated,
# event-timed, one call per stage profiled with ncu --set full --import-source yes
# --clock-control none; torch.softmax timed beside them) and writes
#   reports/h200-softmax/        the float32 report folder (index.html, profile.ncu-rep, ...)
#   reports/h200-softmax-bf16/   the bfloat16 one
#   tests/data/h200_softmax/     the test fixture: a float32 capture of at most 6 MB with its
#                                sidecar files and a README.md note (command, GPU, ncu, date)
# A report's capture is kept under 10 MB: when the 32768-row one is larger, the stages are
# profiled at 8192 rows (128 MiB of float32, past the 60 MB L2; --profile-size) and timed at
# 32768. The fixture is the float32 capture when it is at most 6 MB, else a run at 2048 rows
# of the stages eager and triton_row (else eager alone). tests/cases/test_softmax_fixture.py
# runs on it (it skips until then).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
MAX_REPORT=10000000
MAX_FIXTURE=6000000

report() {  # report OUT ARGS...: make report into OUT; again profiled at 8192 rows if its capture is too big
  local out=$1; shift
  make -s report CASE=examples/softmax OUT="$out" PYTHON="$PY" ARGS="$*" 2>&1 | tee "$out.log"
  if [ "$(stat -c %s "$out/profile.ncu-rep")" -gt $MAX_REPORT ]; then
    echo "record_softmax: $out/profile.ncu-rep is over $MAX_REPORT bytes: profiling at 8192 rows"
    make -s report CASE=examples/softmax OUT="$out" PYTHON="$PY" ARGS="$* --profile-size rows=8192" 2>&1 | tee "$out.log"
  fi
  mv "$out.log" "$out/make_report.log"
}
report reports/h200-softmax
report reports/h200-softmax-bf16 --dtype bfloat16

fixture=tests/data/h200_softmax
src=reports/h200-softmax
cmd="make report CASE=examples/softmax (reports/h200-softmax/make_report.log has the run's console output)"
# Too big: fewer launches at 2048 rows (ncu flushes the caches before each replay pass, so every
# kernel still reads its inputs from DRAM): eager and triton_row, else eager alone.
for stages in eager,triton_row eager; do
  [ "$(stat -c %s "$src/profile.ncu-rep")" -le $MAX_FIXTURE ] && break
  src=$(mktemp -d)/fixture
  run=("$PY" -m profiler_report run --case examples/softmax --size rows=2048 --stages "$stages" --no-peers
       --clock-control none --out "$src")
  "${run[@]}"
  cmd="${run[*]}"
done
if [ "$(stat -c %s "$src/profile.ncu-rep")" -gt $MAX_FIXTURE ]; then
  echo "record_softmax: no capture of at most $MAX_FIXTURE bytes for the fixture (the last: $src)" >&2
  exit 1
fi
rm -rf "$fixture.partial"
mkdir -p "$fixture.partial"
for f in profile.ncu-rep provenance.json timings.json validation.json ncu.log; do
  cp "$src/$f" "$fixture.partial/$f"
done
ncu=$("$PY" -c "from profiler_report.live.ncu import find_ncu; print(find_ncu())")
cat > "$fixture.partial/README.md" <<NOTE
# h200_softmax: a live float32 capture of the Python ladder examples/softmax

Made by \`bash scripts/record_softmax.sh\`: \`$cmd\`.

- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1) (name, driver)
- Nsight Compute: $("$ncu" --version | tail -n 1)
- PyTorch, Triton: $("$PY" -c "import torch, triton; print(torch.__version__, triton.__version__)")
- recorded: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
- size: $("$PY" -c "import json; p = json.load(open('$src/provenance.json')); print(f\"{p['rows']}x{p['cols']} timed, {p['profile_rows']}x{p['profile_cols']} profiled, {p['dtype']}\")")

\`profile.ncu-rep\` holds every kernel each stage's profiled call launched (NVTX ranges
\`pr_softmax.<stage>\`: the eager stage's five), and the copy ceiling; \`provenance.json\` records
the case folder (\`case_dir\`: examples/softmax).
NOTE
rm -rf "$fixture"
mv "$fixture.partial" "$fixture"
echo "wrote reports/h200-softmax/, reports/h200-softmax-bf16/ and $fixture/"
