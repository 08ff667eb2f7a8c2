#!/usr/bin/env bash
# Record "captures the tool did not make": cuda-samples style transpose kernels
# (scripts/foreign/transpose_samples.cu: copy, naive, coalesced, conflict-free), built with nvcc
# and profiled by ncu directly, the way a user profiles their own program. Run on a GPU machine
# with the CUDA toolkit and Nsight Compute, from the repository root:
#   bash scripts/record_foreign.sh [OUTDIR]        (default: tests/data/foreign)
# It writes
#   all_4096.ncu-rep          one capture, all four kernels, 4096 x 4096 float32
#   all_8192.ncu-rep          the same at 8192 x 8192 (the size-mismatch diff)
#   ladder/<kernel>.ncu-rep   one capture per kernel at 4096 x 4096: a ladder kept as one
#                             capture per version (copy, naive, coalesced, conflict_free)
#   *.log                     the program's and ncu's output per capture
#   README.md                 how they were made: commands, GPU, driver, ncu, date
# tests/analysis/test_foreign.py reads them (it skips while they are absent).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-tests/data/foreign}
ncu=${NCU:-ncu}
nvcc=${NVCC:-nvcc}
mkdir -p "$out/ladder"
bin=$(mktemp -d)/transpose_samples
build=("$nvcc" -O3 -lineinfo -arch=sm_90 -o "$bin" scripts/foreign/transpose_samples.cu)
"${build[@]}"
profile=("$ncu" --set full --clock-control none --import-source yes --force-overwrite)

rec() {  # rec NAME N [KERNEL...]: one capture of the named kernels (all without one)
  local name=$1 n=$2; shift 2
  "${profile[@]}" -o "$out/$name" "$bin" "$n" "$@" > "$out/$name.log" 2>&1 \
    || { echo "recording $name failed: see $out/$name.log" >&2; return 1; }
}
rec all_4096 4096
rec all_8192 8192
for k in copy naive coalesced conflict_free; do
  rec "ladder/$k" 4096 "$k"
done

cat > "$out/README.md" <<NOTE
# foreign: captures the tool did not make

Real Nsight Compute captures of cuda-samples style transpose kernels
(\`scripts/foreign/transpose_samples.cu\`: \`copy\`, \`transposeNaive\`, \`transposeCoalesced\`,
\`transposeNoBankConflicts\`; 32x8 threads per 32x32 tile, float32), built and profiled outside
profiler-report, the way a user profiles their own program. Made by \`bash scripts/record_foreign.sh\`:

    ${build[*]}
    ${profile[*]} -o all_4096 transpose_samples 4096
    ${profile[*]} -o all_8192 transpose_samples 8192
    ${profile[*]} -o ladder/<kernel> transpose_samples 4096 <kernel>   # copy naive coalesced conflict_free

| file | what |
| --- | --- |
| \`all_4096.ncu-rep\` | the four kernels in one capture, 4096 x 4096 (grid (128, 128, 1)) |
| \`all_8192.ncu-rep\` | the same at 8192 x 8192 (grid (256, 256, 1)): the size-mismatch diff |
| \`ladder/*.ncu-rep\` | one capture per kernel, 4096 x 4096: a ladder kept as one capture per version |

Each kernel is launched once and checked on the host (\`*.log\`: "correct"). No provenance.json,
timings.json or NVTX ranges: these are what a capture made elsewhere holds.

- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1) (name, driver)
- CUDA: $("$nvcc" --version | tail -n 2 | head -n 1)
- Nsight Compute: $("$ncu" --version | tail -n 1)
- recorded: $(date -u +%Y-%m-%dT%H:%M:%SZ)
NOTE
echo "wrote $out/"
