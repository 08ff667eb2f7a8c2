#!/usr/bin/env bash
# Re-record what the padding-sweep experiment (issue 14) needs, on a GPU machine with CuPy and
# Nsight Compute. Run from the repository root:
#
#   OUT=/some/dir PYTHONPATH=/tmp/site:$PWD bash scripts/device/padding_sweep.sh
#
# Writes, under $OUT:
#   gpu_tests.log              the GPU tests of the sweep (every point validated bit for bit)
#   padding_sweep/             the experiment's capture, as a live run writes it beside profile.ncu-rep:
#     padding_sweep.ncu-rep    one profiled launch per point (20), only the shared-memory metrics
#     padding_sweep.json       per-point validation + when, where, commit, ncu version and options
#     padding_sweep.log        ncu's output
#     NOTE.txt                 how, when and on what it was made (for tests/data/)
#   render/index.html          the committed reports/h200 capture re-rendered with the new files
#   render.log                 what render printed; the MISMATCH count is echoed at the end
# Copy padding_sweep/padding_sweep.{ncu-rep,json,log} into reports/h200/ (the recorded report) and
# into tests/data/h200_padding_sweep/ (the fixture tests/report/test_articles.py reads; add its NOTE.txt).
# Expected wall time: 30-60 s (20 small launches at 2048x2048, SourceCounters + 5 metrics each).
# Clocks: --clock-control none (the run's default); nothing here changes clocks, power or MIG.
set -euo pipefail
: "${OUT:?set OUT to the output folder}"
PY=${PYTHON:-python3}
mkdir -p "$OUT/padding_sweep" "$OUT/render"
start=$(date +%s)

"$PY" -m pytest -q -p no:cacheprovider tests/cases/test_padding_sweep_gpu.py 2>&1 | tee "$OUT/gpu_tests.log"

OUT_DIR="$OUT/padding_sweep" "$PY" - <<'PYEOF'
import json
import os
from pathlib import Path

from profiler_report.model.registry import get_case
from profiler_report.live import ncu as prof
from profiler_report.live.config import RunConfig
from profiler_report.live.session import profile_experiments
from profiler_report.util.timer import StepTimer

out = Path(os.environ["OUT_DIR"])
profile_experiments(get_case("transpose"), prof.find_ncu(), RunConfig(clock_control="none"), out, StepTimer())
meta = json.loads((out / "padding_sweep.json").read_text())
(out / "NOTE.txt").write_text(
    "The padding-sweep experiment's own capture (a real one): one launch per point of\n"
    "profiler_report/cases/transpose/padding_sweep.py, 2048x2048, recorded with\n"
    "`OUT=... PYTHONPATH=/tmp/site:$PWD bash scripts/device/padding_sweep.sh` (the call a live run makes:\n"
    "live.session.profile_experiments).\n"
    f"date: {meta.get('date_utc')}\ngpu: {meta.get('gpu')}\ncommit: {meta.get('commit')}\n"
    f"ncu: {meta.get('ncu_version')}\nclock control: {meta.get('clock_control')}\n"
    f"ncu options: {meta.get('ncu_options')}\nerror: {meta.get('error') or 'none'}\n"
    f"points correct: {sum(p['correct'] for p in meta['points'])} of {len(meta['points'])}\n")
print("wrote", sorted(p.name for p in out.iterdir()))
PYEOF

work=$(mktemp -d)
cp reports/h200/*.json reports/h200/profile.ncu-rep "$work/"
cp "$OUT/padding_sweep/"padding_sweep.* "$work/"
"$PY" -m profiler_report render --from "$work/profile.ncu-rep" --out "$OUT/render" 2>&1 | tee "$OUT/render.log"
rm -rf "$work"
echo "MISMATCH rows in the re-rendered page: $(grep -c 'MISMATCH' "$OUT/render/index.html" || true)"
echo "padding_sweep.sh took $(( $(date +%s) - start )) s"
