#!/usr/bin/env bash
# Keep a live report folder's capture as profile.ncu-repz, Nsight Compute's zstd-compressed
# report (every command reads it as it is; library kernels embed their module's cubin per launch,
# so such captures shrink 10-25x), and render its page again from it. Any machine with zstd:
#   bash scripts/keep_compressed.sh REPORT_FOLDER [PYTHON]
set -euo pipefail
dir=${1:?usage: keep_compressed.sh REPORT_FOLDER [PYTHON]}
PY=${2:-${PYTHON:-python3}}
dir=$(cd "$dir" && pwd)
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
zstd -19 -q -f --rm "$dir/profile.ncu-rep" -o "$dir/profile.ncu-repz"
# profile-parts.json names profile.ncu-rep; a folder with one capture holds the whole ladder.
if [ -f "$dir/profile-parts.json" ] && "$PY" -c "import json,sys; sys.exit(len(json.load(open('$dir/profile-parts.json'))['parts']) != 1)"; then
  rm -f "$dir/profile-parts.json"
fi
"$PY" scripts/rerender_live_report.py "$dir"
