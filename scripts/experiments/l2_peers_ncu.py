"""One launch each of the fastest peers, this ladder's vector stages and the 16-byte copy at an
L2-resident size, each in an NVTX range ``cmp_<name>`` for ncu (GPU):

    ncu --nvtx --nvtx-include cmp_triton/ ... python3 scripts/experiments/l2_peers_ncu.py DTYPE ROWS COLS

Every output is checked against the transpose (or, for the copy, the input) before it is profiled;
each runs three times unprofiled first, so that its inputs sit in L2 as in the bench's timing.
"""

from __future__ import annotations

import sys

from profiler_report.cases import get_case
from profiler_report.cases.transpose import bench
from profiler_report.live.gpu import import_cupy, push_range
from profiler_report.live.kernels import Kernels, compile_module

STAGES = ("vec_swizzled", "vec_tuned", "vec_colwalk", "vec_realigned")
PEERS = ("triton transpose", "torch.compile t().contiguous()")


def main() -> None:
    dtype, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cupy = import_cupy()
    case = get_case("transpose")
    copy = next(c for c in bench.COPIES if c.targs[0] == "uint4")
    module, names = compile_module(case, dtype, extra=(copy,))
    k = Kernels(module, names, dtype, case)
    size = {"rows": rows, "cols": cols}
    src = case.make_input(cupy, size, dtype, seed=1)
    dst = cupy.empty((cols, rows), dtype=dtype)
    ref = cupy.ascontiguousarray(src.T)
    stages = {s: case.manifest.stage(s) for s in STAGES}
    fns = {s: (lambda a, b, st=st: k.launch(st, a, b, size)) for s, st in stages.items()}
    fns["copy16"] = lambda a, b: k.launch(copy, a, b.reshape(rows, cols), size)
    peers = bench.peers(cupy, dtype)
    fns.update({p.split()[0].replace(".", ""): peers[p][0] for p in PEERS if peers.get(p, (None,))[0]})
    for name, fn in fns.items():
        got = None
        for _ in range(3):
            dst.fill(0)
            got = fn(src, dst)
        cupy.cuda.runtime.deviceSynchronize()
        out = dst if got is None else cupy.from_dlpack(got)
        ok = bool((out.reshape(rows, cols) == src).all() if name == "copy16" else (out == ref).all())
        print(name, "exact" if ok else "WRONG", flush=True)
        with push_range(f"cmp_{name}"):
            fn(src, dst)
            cupy.cuda.runtime.deviceSynchronize()


if __name__ == "__main__":
    main()
