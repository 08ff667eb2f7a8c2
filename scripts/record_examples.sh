#!/usr/bin/env bash
# Record the worked example live, on a GPU machine with CuPy and Nsight Compute, from the
# repository root:
#   bash scripts/record_examples.sh
# It runs the case folder examples/histogram exactly as a user's folder runs (validated,
# event-timed, profiled with ncu --set full --import-source yes --clock-control none, one launch
# per stage; expectations judged), and writes
#   reports/h200-histogram/      the report folder (index.html, profile.ncu-rep, timings.json,
#                                validation.json, provenance.json, summary.csv/json, ncu.log,
#                                make_report.log: the console output)
#   tests/data/h200_histogram/   the test fixture: the same capture with its sidecar files and a
#                                README.md note (command, GPU, driver, ncu, date)
# Commit both; tests/cases/test_histogram_example.py then runs on the fixture (it skips until then).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
out=reports/h200-histogram
fixture=tests/data/h200_histogram
log=$(mktemp)
cmd=("$PY" -m profiler_report run --case examples/histogram --clock-control none --out "$out" ${ARGS:-})
"${cmd[@]}" 2>&1 | tee "$log"
cp "$log" "$out/make_report.log"
rm -f "$log"

rm -rf "$fixture.partial"
mkdir -p "$fixture.partial"
for f in profile.ncu-rep provenance.json timings.json validation.json ncu.log; do
  cp "$out/$f" "$fixture.partial/$f"
done
ncu=$("$PY" -c "from profiler_report.live.ncu import find_ncu; print(find_ncu())")
cat > "$fixture.partial/README.md" <<NOTE
# h200_histogram: a live capture of the worked example examples/histogram

Made by \`bash scripts/record_examples.sh\` (the same files as \`$out/\`): \`${cmd[*]}\`.

- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1) (name, driver)
- Nsight Compute: $("$ncu" --version | tail -n 1)
- recorded: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
- size: n = $("$PY" -c "import json; print(json.load(open('$out/provenance.json'))['n'])") bytes, uint8

\`profile.ncu-rep\` holds one profiled launch per stage (NVTX ranges \`pr_histogram.<stage>\`) and
the copy ceiling; \`provenance.json\` records the case folder (\`case_dir\`: examples/histogram).
NOTE
rm -rf "$fixture"
mv "$fixture.partial" "$fixture"
echo "wrote $out/ and $fixture/"
