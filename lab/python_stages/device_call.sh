#!/usr/bin/env bash
# One device call for the Python-ladder work: the softmax ladder (float32 and bfloat16, through
# `make report`), a fixture-sized capture when the float32 one is over 6 MB, and the
# `new-case --python` scaffold run unedited. Results under $OUT: logs + one tarball.
# usage (on the device, from .dev/python): bash lab/python_stages/device_call.sh COMMIT
set -o pipefail
export PROFILER_REPORT_COMMIT=${1:-unknown} PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ../../.whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD
log=$OUT/call.log
step() { echo "== $(date +%T) $*" | tee -a "$log"; }
step "versions"; python3 -c "import torch, triton, cupy; print(torch.__version__, triton.__version__, cupy.__version__)" 2>&1 | tee -a "$log"
mkdir -p /tmp/res
step "softmax float32"
make -s report CASE=examples/softmax OUT=/tmp/res/softmax-f32 PYTHON=python3 ARGS="--ncu-timeout 300" 2>&1 | tee -a "$log"
echo "rc=$?" | tee -a "$log"
step "scaffold"
python3 -m profiler_report new-case --python /tmp/pyladder 2>&1 | tee -a "$log"
python3 -m profiler_report run --case /tmp/pyladder --size n=33554432 --ncu-timeout 200 --out /tmp/res/scaffold 2>&1 | tee -a "$log"
echo "rc=$?" | tee -a "$log"
step "softmax bfloat16"
make -s report CASE=examples/softmax OUT=/tmp/res/softmax-bf16 PYTHON=python3 ARGS="--dtype bfloat16 --ncu-timeout 300" 2>&1 | tee -a "$log"
echo "rc=$?" | tee -a "$log"
size=$(stat -c %s /tmp/res/softmax-f32/profile.ncu-rep 2>/dev/null || echo 0)
if [ "$size" -gt 6000000 ]; then
  step "fixture (capture $size bytes > 6 MB): rows=2048, stages eager and triton_row"
  python3 -m profiler_report run --case examples/softmax --size rows=2048 --stages eager,triton_row --no-peers \
    --repeats 20 --ncu-timeout 200 --out /tmp/res/softmax-fixture 2>&1 | tee -a "$log"
  echo "rc=$?" | tee -a "$log"
fi
step "done"; ls -la /tmp/res/* | tee -a "$log"
tar czf "$OUT/res.tgz" -C /tmp/res . 2>&1 | tee -a "$log"
