"""vec_peeled against vec_tuned, memcpy and torch.compile at odd and aligned shapes (GPU).

Usage: python3 scripts/experiments/peeled.py OUT.json [--quick]
Every kernel is checked bit for bit (bench_size's check) before it is timed; the correctness
shapes run with a few repeats only.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace

from profiler_report.cases.transpose import bench
from profiler_report.model.registry import get_case

CONFIGS = ((32, 8, 256), (32, 16, 512), (32, 16, 256), (32, 32, 512), (32, 32, 1024))
CHECK = ((1, 1), (31, 65), (4097, 33), (33, 4097), (7, 5), (1009, 2003), (2003, 1009), (257, 129))
TIMED = ((4097, 8191), (8191, 8193), (12345, 6789), (8192, 8192), (16384, 16384), (8192, 4096))


def main() -> None:
    out, quick = sys.argv[1], "--quick" in sys.argv
    case = get_case("transpose")
    tuned = next(s for s in case.manifest.stages if s.launch == "vec_tuned")
    peeled = next(s for s in case.manifest.stages if s.launch == "vec_peeled")
    rows = []
    for dtype in ("float16", "float32", "float64"):
        v = 16 // {"float16": 2, "float32": 4, "float64": 8}[dtype]
        cfgs = [c for c in CONFIGS if c[0] * c[1] * v * 16 <= bench.MAX_DYNAMIC_SMEM]
        stages = [tuned] + [replace(peeled, id=f"vec_peeled [{a},{b},{t}]", targs=(str(a), str(b), str(t)))
                            for a, b, t in cfgs]
        for r, c in CHECK:
            got = bench.bench_size(case, r, c, dtype, repeats=20, warmup=1, buffers=1, with_peers=False, stages=stages)
            bad = [x.name for x in got if x.note.startswith("WRONG")]
            print(f"check {r}x{c} {dtype}: {'WRONG ' + ','.join(bad) if bad else 'all exact'}", flush=True)
            rows += [asdict(x) for x in got]
        for r, c in TIMED[:3] if quick else TIMED:
            peers = (r, c) in ((8191, 8193), (16384, 16384))
            got = bench.bench_size(case, r, c, dtype, repeats=30, with_peers=peers, stages=stages)
            rows += [asdict(x) for x in got]
            best = max((x for x in got if x.kind == "stage" and x.gbps == x.gbps), key=lambda x: x.gbps)
            pk = [x for x in got if x.kind == "peer" and x.gbps == x.gbps]
            bp = max(pk, key=lambda x: x.gbps) if pk else None
            tn = next(x for x in got if x.name == "vec_tuned")
            for x in got:
                x.pct_of_memcpy = 100 * x.gbps / got[0].gbps
            print(f"{r}x{c} {dtype}: vec_tuned {tn.pct_of_memcpy:.1f}%  best {best.name} {best.pct_of_memcpy:.1f}%"
                  + (f"  peer {bp.name} {bp.pct_of_memcpy:.1f}%" if bp else ""), flush=True)
            for x in got:
                if x.kind == "stage":
                    print(f"    {x.name:<28} {x.gbps:7.0f} {x.pct_of_memcpy:6.1f}% {x.note}", flush=True)
            json.dump(rows, open(out, "w"))
    json.dump(rows, open(out, "w"))


if __name__ == "__main__":
    main()
