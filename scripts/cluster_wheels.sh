#!/usr/bin/env bash
# Wheels of the `cluster` extra for a GPU machine that cannot reach a package index, for
# `profiler-report bench --cluster local` there. Its image already holds CuPy, numba, cuda-core,
# nvidia-ml-py, cloudpickle, msgpack, psutil, toolz, fsspec, pyyaml, click, jinja2 and pandas;
# these are what it lacks (about 3.2 MB). Run here, in the repository root:
#     bash scripts/cluster_wheels.sh            # writes .whl/ (git-ignored via .git/info/exclude)
# then, on the GPU machine, with .whl carried:
#     python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
#         && export PYTHONPATH=/tmp/site:$PWD
# --no-deps skips dask-cuda's rapids-dask-dependency, a metapackage that only pins dask's version
# (dask and distributed are named here at the version distributed 2026.8.0 requires).
set -euo pipefail
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> "$(git rev-parse --git-path info/exclude)"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
    dask==2026.8.0 distributed==2026.8.0 dask-cuda==26.10.0 tornado==6.6.1 tblib==3.2.2 zict==3.0.0 \
    partd==1.4.2 locket==1.0.0
ls -l .whl
