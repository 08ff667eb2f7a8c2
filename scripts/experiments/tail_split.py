"""vec_realigned: the last wave's tiles split into narrow ones (half the columns each), by four
rules for how many, at the odd DRAM points and two aligned ones (GPU).

Usage: python3 scripts/experiments/tail_split.py OUT.json
The grid is ntiles + S blocks (the kernel splits the last S tiles); S by rule, with R = ntiles mod
resident and resident = SMs x blocks per SM (the kernel's realigned_min_blocks, mirrored here):
none 0; half R where R <= resident / 2, else 0; tail R; wave min(ntiles, resident). Every
configuration is checked bit for bit at the 17 shapes of realigned_wide.py in its dtype with every
tile split and with the tail rule first; then each point is event-timed, 20 repeats, two rounds.
"""

from __future__ import annotations

import sys

from realigned import realigned, report  # run from the repo root: this folder is sys.path[0]
from realigned_wide import CHECK

from profiler_report.cases import get_case
from profiler_report.cases.base import Launch
from profiler_report.cases.transpose import TransposeCase, bench
from profiler_report.cases.transpose.launch import realigned_smem_bytes, tuned_shape
from profiler_report.util.dtypes import ITEMSIZE

CONFIGS = {"float16": ((8, 16, 256), (16, 16, 256)), "float32": ((16, 32, 512), (16, 16, 256)),
           "float64": ((32, 32, 512), (32, 16, 256))}
ODD = ((4097, 8191), (8191, 8193), (12345, 6789), (7919, 7907))
TIMED = {"float16": (*ODD, (8192, 8192), (4096, 4096)), "float32": (*ODD, (4096, 4096)), "float64": ODD}
RULES = ("none", "half", "tail", "wave")
STATE = {"rule": "none", "sms": 132}
_launch = TransposeCase.launch


def blocks_per_sm(trc: int, tcc: int, nt: int, v: int) -> int:
    threads = 1280 if v == 8 and nt == 256 else 1536
    by_smem = 233472 // (realigned_smem_bytes(trc, tcc, v) + 1024)
    return min(threads // nt, max(by_smem, 1))


def split(rule: str, tiles: int, resident: int) -> int:
    r = tiles % resident
    return {"none": 0, "all": tiles, "half": r if r <= resident // 2 else 0, "tail": r,
            "wave": min(tiles, resident)}[rule]


def launch(self, stage, size, dtype) -> Launch:  # noqa: ANN001
    got = _launch(self, stage, size, dtype)
    if stage.launch != "vec_realigned" or STATE["rule"] == "none":
        return got
    trc, tcc, nt = tuned_shape(stage)
    v = 16 // ITEMSIZE[dtype]
    tiles = got.grid[0]
    extra = split(STATE["rule"], tiles, STATE["sms"] * blocks_per_sm(trc, tcc, nt, v))
    return Launch((tiles + extra,), got.block, got.shared_bytes)


def main() -> None:
    import cupy

    TransposeCase.launch = launch
    STATE["sms"] = cupy.cuda.Device().attributes["MultiProcessorCount"]
    out = sys.argv[1]
    case = get_case("transpose")
    rows: list = []
    for dtype, cfgs in CONFIGS.items():
        wrong: set = set()
        for rule in ("all", "tail"):
            STATE["rule"] = rule
            for r, c in CHECK:
                got = bench.bench_size(case, r, c, dtype, repeats=3, warmup=1, buffers=1, with_peers=False,
                                       stages=[realigned(*x) for x in cfgs], suffix=f" {rule}")
                wrong |= {x.name for x in got if x.note.startswith("WRONG")}
        print(f"check {dtype}, {len(cfgs)} configurations at {len(CHECK)} shapes, split all and tail: "
              f"wrong {sorted(wrong) or 'none'}", flush=True)
    for rnd in (1, 2):
        for dtype, cfgs in CONFIGS.items():
            for r, c in TIMED[dtype]:
                for rule in RULES:
                    STATE["rule"] = rule
                    got = bench.bench_size(case, r, c, dtype, repeats=20, with_peers=False,
                                           stages=[realigned(*x) for x in cfgs], suffix=f" {rule} round {rnd}")
                    report(rows, got, r, c, dtype, out)


if __name__ == "__main__":
    main()
