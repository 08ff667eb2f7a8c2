"""A CPU model of ``transpose_vec_realigned``'s index arithmetic (no GPU).

Usage:
    python3 scripts/experiments/realigned_model.py owners [TCC [NT [TRC]]]   # every element written once?
    python3 scripts/experiments/realigned_model.py banks          # wavefronts per gather

``owners`` replays both phases of the kernel for every block and thread (staged slots as a dict,
elements as their own flat input index) at fixed and random shapes in 2-, 4- and 8-byte elements,
and reports any output element that is wrong or written more than once. It found the bottom-tile
ownership bug of the fifth attempt (scripts/experiments/results/README.md) before the GPU did
again. ``banks`` counts the shared-memory wavefronts of one warp's gathers (32 banks of 4 bytes;
8-byte loads as two half-warps) for every residue of rows and cols mod 2V. The GPU tests
(tests/cases/test_peeled_gpu.py) are what check the kernel itself; this models the design.
"""

from __future__ import annotations

import itertools
import random
import sys

import numpy as np


def swizzle(ri: int, v: int, odd: bool = False) -> int:
    """The kernel's realigned_swizzle (``odd``: rows and cols both odd)."""
    return ((ri // (2 * v)) * 2) & 7 if odd and v != 8 else ((ri // v) * (2 if v == 8 else 1)) & 7


def slot_of(ri: int, jr: int, v: int, tcc: int, odd: bool = False) -> int:
    group = 32 * tcc + 64
    g, rr = divmod(ri, 32)
    return g * group + (2 * rr + jr - tcc if jr >= tcc else 64 + rr * tcc + (jr ^ swizzle(ri, v, odd)))


def run(rows: int, cols: int, size: int, tcc: int = 8, nt: int = 0, trc: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """(indices of wrong output elements, indices written more than once) of one launch with
    ``nt`` threads (32 or 16 x tcc; 0: 32 x tcc) and ``trc`` chunk rows (32 or 16)."""
    v = 16 // size
    a, nt = 2 * v, nt or 32 * tcc
    rpi = nt // tcc
    rin, qstep = trc * v + a - 1, (32 * tcc + 64) * 16
    n = rows * cols
    inp = np.arange(n, dtype=np.int64)
    out = np.full(n, -1, dtype=np.int64)
    writes = np.zeros(n, dtype=np.int64)
    tiles_r = -(-rows // (trc * v))
    cm, rm = cols % a, rows % a
    odd = bool(rows & cols & 1)
    for b in range(tiles_r * -(-cols // (tcc * v))):
        r0, c0 = (b % tiles_r) * trc * v, (b // tiles_r) * tcc * v
        staged: dict[int, list[int]] = {}
        nr = min(rin if rm else trc * v, rows - r0)

        def load(slot: int, e0: int, staged: dict[int, list[int]] = staged) -> None:
            staged[slot] = [int(inp[e0 + e]) if e0 + e < n else 0 for e in range(v)]

        for t in range(nt):
            jr, ri0 = t % tcc, t // tcc
            m = ((ri0 % a) * cm) % a
            for it in range(-(-rin // rpi)):
                ri = ri0 + rpi * it
                if ri < nr:
                    load(slot_of(ri, jr, v, tcc, odd), (r0 + ri) * cols + c0 - m + v * jr)
            for it in range(-(-(2 * rin) // nt)) if cm else ():
                ri, half = (t + nt * it) // 2, t % 2
                mx = ((ri % a) * cm) % a
                if ri < nr and mx:
                    load(slot_of(ri, tcc + half, v, tcc, odd), (r0 + ri) * cols + c0 - mx + v * (tcc + half))
        for t, h in itertools.product(range(nt), range(32 * tcc // nt)):
            g, jl = (t % 32) % v, (t % 32) // v
            orow = v * (t // 32 + (nt // 32) * h) + g
            gr = c0 + orow
            if gr >= cols:
                continue
            d = (a - ((gr % a) * rm) % a) % a
            base = []
            for k in range(v):
                ri = d + v * jl + k
                p = ((ri % a) * cm) % a + orow
                base.append(slot_of(ri, p // v, v, tcc, odd) * 16 + (p % v) * size)

            def ld(addr: int, staged: dict[int, list[int]] = staged) -> int:
                slot, byte = divmod(addr, 16)
                return staged[slot][byte // size]

            dst0 = gr * rows + r0 + d + v * jl
            seg = rows - r0
            if r0 + rin <= rows:
                last = d + trc * v
            elif r0 + trc * v >= rows:
                last = seg + (a - (((gr + 1) % a) * rm) % a) % a
            else:
                last = d + trc * v
            for q in range(trc * v // 32):
                c = d + v * jl + 32 * q
                if c >= last:
                    break
                for k in range(v):
                    f = gr * rows + r0 + c + k
                    if f >= n:
                        break
                    val = ld(base[k] + q * qstep) if c + k < seg else int(inp[(f % rows) * cols + f // rows])
                    out[dst0 + 32 * q + k] = val
                    writes[dst0 + 32 * q + k] += 1
    ref = inp.reshape(rows, cols).T.reshape(-1)
    return np.nonzero(out != ref)[0], np.nonzero(writes > 1)[0]


def owners(tcc: int, nt: int = 0, trc: int = 32) -> int:
    random.seed(3)
    shapes = [(131, 999), (257, 129), (133, 1000), (261, 37), (4097, 33), (1, 1), (7, 5), (3, 1000), (1, 333),
              (333, 1), (135, 263), (70, 70)]
    shapes += [(random.randint(1, 700), random.randint(1, 300)) for _ in range(25)]
    bad = 0
    for (rows, cols), size in itertools.product(shapes, (2, 4, 8)):
        wrong, twice = run(rows, cols, size, tcc, nt, trc)
        if len(wrong) or len(twice):
            bad += 1
            print(f"{rows}x{cols} {size}-byte: {len(wrong)} wrong, {len(twice)} written twice")
    print(f"{len(shapes) * 3 - bad} of {len(shapes) * 3} launches exact, every element written once "
          f"(TRC {trc}, TCC {tcc}, {nt or 32 * tcc} threads)")
    return 1 if bad else 0


def gather_wavefronts(size: int, tcc: int, rows: int, cols: int) -> tuple[float, int]:
    """(mean, worst) shared wavefronts per gather instruction of one interior tile."""
    v = 16 // size
    a, r0, c0 = 2 * v, 32 * v * 3, tcc * v * 2
    odd = bool(rows & cols & 1)  # the kernel's rotated gathers: lane g starts at element g
    per: list[int] = []
    for w, q, k in itertools.product(range(tcc), range(v), range(v)):
        addrs = []
        for lane in range(32):
            g, jl = lane % v, lane // v
            orow = v * w + g
            d = (-((c0 + orow) * rows + r0)) % a
            ri = d + v * jl + 32 * q + ((k + g) % v if odd else k)
            p = ((r0 + ri) * cols) % a + orow
            addrs.append(slot_of(ri, p // v, v, tcc, odd) * 16 + (p % v) * size)
        groups = [addrs[:16], addrs[16:]] if size == 8 else [addrs]
        total = 0
        for grp in groups:
            banks: dict[int, set[int]] = {}
            for addr in grp:
                for b in range(0, max(size, 4), 4):
                    banks.setdefault((addr + b) // 4 % 32, set()).add((addr + b) // 4)
            total += max(len(x) for x in banks.values())
        per.append(total)
    return sum(per) / len(per), max(per)


def banks() -> int:
    for size, tcc in itertools.product((2, 4, 8), (8, 16)):
        v = 16 // size
        res = {(rm, cm): gather_wavefronts(size, tcc, 8192 + rm, 8192 + cm)
               for rm, cm in itertools.product(range(2 * v), range(2 * v))}
        mean = sum(r[0] for r in res.values()) / len(res)
        worst = max(res.items(), key=lambda kv: kv[1][0])
        print(f"{size}-byte TCC {tcc}: {mean:.2f} wavefronts per gather on average over rows, cols mod {2 * v}; "
              f"aligned {res[(0, 0)][0]:.2f}; worst {worst[1][0]:.2f} at rows % {2 * v} = {worst[0][0]}, "
              f"cols % {2 * v} = {worst[0][1]}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("owners", "banks"):
        print("usage: python3 scripts/experiments/realigned_model.py owners [TCC [NT [TRC]]] | banks", file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "owners":
        sys.exit(owners(*(int(x) for x in sys.argv[2:5])) if len(sys.argv) > 2 else owners(8))
    sys.exit(banks())
