#!/usr/bin/env bash
# One device call for the Python-ladder work (on the lent H200, from the synced tree .dev/NAME):
# scripts/record_softmax.sh (float32 and bfloat16 reports, the fixture) and the
# `new-case --python` scaffold's `run --case` unedited. Logs and one tarball under $OUT.
# usage: bash lab/python_stages/device_call.sh COMMIT
set -o pipefail
export PROFILER_REPORT_COMMIT=${1:-unknown} PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ../../.whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD
log=$OUT/call.log
step() { echo "== $(date +%T) $*" | tee -a "$log"; }
step "versions"; python3 -c "import torch, triton, cupy; print(torch.__version__, triton.__version__, cupy.__version__)" 2>&1 | tee -a "$log"
step "scaffold"
python3 -m profiler_report new-case --python /tmp/pyladder 2>&1 | tee -a "$log"
python3 -m profiler_report run --case /tmp/pyladder --size n=33554432 --ncu-timeout 200 --out /tmp/scaffold 2>&1 | tee -a "$log"
echo "rc=$?" | tee -a "$log"
step "softmax"
bash scripts/record_softmax.sh 2>&1 | tee -a "$log"
echo "rc=$?" | tee -a "$log"
step "done"; ls -la reports/h200-softmax* tests/data/h200_softmax /tmp/scaffold 2>&1 | tee -a "$log"
tar czf "$OUT/res.tgz" reports/h200-softmax reports/h200-softmax-bf16 tests/data/h200_softmax -C /tmp scaffold 2>&1 | tee -a "$log"
