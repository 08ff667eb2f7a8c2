#!/usr/bin/env bash
# The profiled sweep (`profiler-report sweep`) on a GPU machine: the same small sweep in-process and
# through `--cluster local` (dask-cuda: one worker per visible GPU), their wall times, the overhead
# per point (wall minus time on the worker) and the comparison (scripts/compare_sweep.py). With
# more than one GPU visible it also runs the cluster on the first GPU alone, for the speed-up.
#
# Run from the repository root with .whl carried (bash scripts/cluster_wheels.sh makes it):
#     PYTHONPATH=/tmp/site:$PWD OUT=/some/dir bash scripts/device/profiled_sweep.sh
# Default sweep: the transpose's last 3 stages (vec_deep, vec_colwalk, vec_tuned; the copy ceiling
# is added at every point) x 3 sizes x 2 dtypes = 6 points, one ncu process each (--set full,
# --clock-control none). Override with STAGES=..., SIZES="rows=R,cols=C ..." and DTYPES="...".
# Expected wall time on one H200: about 4-6 minutes (each run ~1.5-2.5 min; every ncu target
# compiles its kernels cold: each run gets a fresh CUPY_CACHE_DIR, so neither warms the other).
#
# Writes under $OUT (at most 8 files, each under 16 MiB, as the device returns them):
#   run.log               everything printed, ending with the timings and the comparison
#   timings.json          wall time of each run, GPU count, per-point overhead (from sweep.json)
#   sweep-inprocess.json  OUT of the in-process run: its sweep.json
#   sweep-cluster.json    the --cluster local run's sweep.json (all visible GPUs)
#   sweep-cluster-1gpu.json   (more than one GPU only) the cluster on the first GPU alone
#   results.tar.gz.part-NN    the in-process folder (captures/*.ncu-rep and ncu logs, report/),
#                             split at 15 MiB: cat results.tar.gz.part-* | tar xz
set -uo pipefail
: "${OUT:?set OUT to the folder for the results}"
STAGES=${STAGES:-vec_deep,vec_colwalk,vec_tuned}
SIZES=${SIZES:-"rows=4096,cols=4096 rows=8192,cols=8192 rows=8192,cols=4096"}
DTYPES=${DTYPES:-"float32 float16"}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1

if ! python3 -c "import distributed, dask_cuda" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || { echo "error: the cluster wheels (.whl/) did not install (fix: bash scripts/cluster_wheels.sh, carry .whl)"; exit 2; }
fi
NGPU=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())")
echo "GPUs visible: $NGPU ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"
ARGS=(--case transpose --stages "$STAGES")
for s in $SIZES; do ARGS+=(--size "$s"); done
for d in $DTYPES; do ARGS+=(--dtype "$d"); done
WORK=$(mktemp -d)

sweep() {  # sweep NAME [extra options]: one run into $WORK/NAME, its wall time into $WORK/NAME.wall
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    CUPY_CACHE_DIR=$(mktemp -d) python3 -m profiler_report sweep "${ARGS[@]}" --out "$WORK/$name" "$@"
    echo "rc=$? of $name"
    python3 -c "import sys, time; print(round(time.time() - float(sys.argv[1]), 2))" "$t0" > "$WORK/$name.wall"
    echo "$name: $(cat "$WORK/$name.wall") s of wall time"
}

sweep inprocess
sweep cluster --cluster local
if [ "$NGPU" -gt 1 ]; then
    first=$(python3 -c "import os; print((os.environ.get('CUDA_VISIBLE_DEVICES') or '0').split(',')[0])")
    CUDA_VISIBLE_DEVICES=$first sweep cluster-1gpu --cluster local
fi

echo "== in-process against --cluster local ($NGPU GPU(s))"
python3 scripts/compare_sweep.py "$WORK/inprocess" "$WORK/cluster"; echo "compare rc=$?"
[ -d "$WORK/cluster-1gpu" ] && { python3 scripts/compare_sweep.py "$WORK/cluster-1gpu" "$WORK/cluster"; echo "compare rc=$?"; }

python3 - "$WORK" "$NGPU" "$OUT/timings.json" <<'PY'
import json, statistics, sys
from pathlib import Path
work, ngpu, dest = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
out = {"gpus": ngpu, "runs": {}}
for run in ("inprocess", "cluster", "cluster-1gpu"):
    if not (work / run / "sweep.json").is_file():
        continue
    pts = json.loads((work / run / "sweep.json").read_text())["sweep"]["points"]
    ov = [p["wall_s"] - p["seconds"] for p in pts if p["status"] == "ok"]
    out["runs"][run] = {"wall_s": float((work / f"{run}.wall").read_text()), "points": len(pts),
                        "ok": sum(p["status"] == "ok" for p in pts), "worker_s": round(sum(p["seconds"] for p in pts), 2),
                        "overhead_per_point_s": {"median": round(statistics.median(ov), 3) if ov else None,
                                                 "max": round(max(ov), 3) if ov else None},
                        "gpus_used": sorted({p["where"].get("gpu_uuid", "") for p in pts})}
r = out["runs"]
if "cluster-1gpu" in r and "cluster" in r:
    out["speedup_vs_1gpu"] = round(r["cluster-1gpu"]["wall_s"] / r["cluster"]["wall_s"], 2)
dest.write_text(json.dumps(out, indent=2) + "\n")
print(json.dumps(out, indent=2))
PY

cp "$WORK/inprocess/sweep.json" "$OUT/sweep-inprocess.json" 2>/dev/null
cp "$WORK/cluster/sweep.json" "$OUT/sweep-cluster.json" 2>/dev/null
[ -f "$WORK/cluster-1gpu/sweep.json" ] && cp "$WORK/cluster-1gpu/sweep.json" "$OUT/sweep-cluster-1gpu.json"
tar -C "$WORK" -czf - --exclude=points inprocess | split -b 15M -d - "$OUT/results.tar.gz.part-"
ls -l "$OUT"
