"""The second case: a parallel reduction (sum of n elements), naive to the read ceiling.

After M. Harris, "Optimizing Parallel Reduction in CUDA" (2007): seven stages, then 16-byte loads
and a one-pass finish. Stages, their expected effects and the read-ceiling kernel are in
``kernels/reduction/stages.toml``. A stage's run is its first pass over the input (the launch
ncu profiles) and the passes over the partial sums that follow (inside the event timing); the
one-pass stage finishes in its last block.

The output buffer holds the result at ``out[0]``, a ticket counter at ``out[1]`` (one-pass
stage) and from ``out[64]`` two regions for the partial sums of alternate passes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from profiler_report.cases.reduction import launch as geo
from profiler_report.errors import InputError
from profiler_report.model.base import Case, Comparison, Launch, Size, Step, Work
from profiler_report.model.manifest import Stage
from profiler_report.util.dtypes import ITEMSIZE

#: float32 unit roundoff.
U32 = 2.0 ** -24
#: Unit roundoff of float64, the reference's own precision.
U64 = 2.0 ** -53
#: First element of the partial-sum regions (256-byte aligned: 16-byte loads read them).
PARTIALS = 64
#: Largest n: the kernels index with 32-bit unsigned integers.
MAX_N = 2**31 - 1


@dataclass(frozen=True)
class Reference:
    """The exact sum and how far a correct float32 result may lie from it.

    ``value`` is the float64 host sum (int32: the int64 sum wrapped to 32 bits); ``bound`` the
    worst-case float32 error ``h u / (1 - h u) * sum |x|`` (0 for int32); ``op`` "sum" or "read"
    (the read ceiling's XOR of all 32-bit words)."""

    value: Any
    bound: float
    op: str
    chain: int = 0


def _xor_fold(xp: Any, words: Any) -> int:
    """XOR of every 32-bit word, by halving on the device (``xp``: cupy, or numpy in tests)."""
    w = words
    while int(w.size) > 1:
        if int(w.size) % 2:
            w = xp.concatenate([w, xp.zeros(1, dtype=w.dtype)])
        w = w[0::2] ^ w[1::2]
    return int(w[0]) if int(w.size) else 0


def _region(n: int, divisor: int) -> int:
    return (math.ceil(n / divisor) + PARTIALS - 1) // PARTIALS * PARTIALS


class ReductionCase(Case):
    """``out[0] = in[0] + ... + in[n-1]`` for float32 or int32."""

    name = "reduction"
    bench_module = "profiler_report.cases.reduction.bench"
    title = "parallel reduction (sum)"
    dims = ("n",)
    launch_kinds = geo.LAUNCH_KINDS
    default_size = {"n": 2**28}  # noqa: RUF012 (1 GiB of float32: far past the 60 MB L2)
    dtypes = ("float32", "int32")
    compare_text = ("int32: bit-exact against the host's int64 sum wrapped to 32 bits (integer addition is "
                    "associative). float32: within h*u/(1-h*u)*sum|x| of the float64 host sum, u = 2^-24, h = the "
                    "longest chain of additions behind the result (elements per thread + log2(threads) per pass): "
                    "the worst-case summation bound (Higham, Accuracy and Stability of Numerical Algorithms, 4.2)")
    validation_text = ("Random input (float32 in [1, 2), int32 in [-100, 100] without 0; never zero), output and "
                       "scratch poisoned with all-ones bytes before each run, the result compared with a host "
                       "reference: " + compare_text + ". ncu profiles each stage's first pass; the event timing "
                       "covers every pass. Bytes counted: n * 4 read.")
    summary_columns = (
        "event_gbps", "pct_of_copy_kernel", "duration_us", "dram_read_pct_peak", "instructions_executed",
        "threads_per_instruction", "shared_excessive_wavefronts", "barrier_stall_per_issue",
        "achieved_occupancy_pct", "registers_per_thread",
    )
    stage_metrics = (
        "event_gbps", "pct_of_copy_kernel", "duration_us", "dram_read_gbps", "dram_read_pct_peak",
        "instructions_executed", "threads_per_instruction", "branch_uniformity_pct", "shared_excessive_wavefronts",
        "shared_wavefronts_per_load", "barrier_stall_per_issue", "global_load_sectors_per_request",
        "achieved_occupancy_pct", "registers_per_thread",
    )

    def size(self, values: Mapping[str, int | None]) -> Size:
        size = super().size(values)
        if size["n"] > MAX_N:
            raise InputError(f"reduction n must be at most 2^31 - 1, got {size['n']}", "use a smaller --size n=N")
        return size

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """Bytes read: ``n * itemsize`` (the partial sums' traffic, under 0.5 %, is not counted);
        one add per element."""
        return Work(size["n"] * ITEMSIZE[dtype], flops=size["n"] if dtype == "float32" else 0)

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        """The first pass (the one ncu profiles)."""
        return geo.launch(stage, self.manifest, size["n"], dtype)

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        import numpy as np

        return inputs, output, np.uint32(size["n"])

    def steps(self, stage: Stage, inputs: Any, output: Any, size: Size, dtype: str) -> list[Step]:
        """Pass 1 (profiled) over the input, then one pass per level of partial sums, each
        writing into the other scratch region, the last into ``out[0]``. The one-pass stage zeroes
        its ticket first; the read ceiling zeroes its XOR accumulator."""
        import numpy as np

        n = size["n"]
        if stage.op == "read" or stage.launch == "one_pass":
            zero = output[0:1] if stage.op == "read" else output[1:2]
            return [Step(zero=zero), Step(stage, self.launch(stage, size, dtype), (inputs, output, np.uint32(n)))]
        regions = self._regions(output, n)
        out, src = [], inputs
        for k, count in enumerate(geo.passes(stage, self.manifest, n)):
            shape = geo.launch(stage, self.manifest, count, dtype)
            dst = output[0:1] if shape.grid[0] == 1 else regions[k % 2]
            out.append(Step(stage, shape, (src, dst, np.uint32(count)), profiled=k == 0))
            src = dst
        return out

    @staticmethod
    def _regions(output: Any, n: int) -> tuple[Any, Any]:
        a = _region(n, 32)
        return output[PARTIALS:PARTIALS + a], output[PARTIALS + a:]

    def bank_maps(self, dtype: str) -> list[dict[str, Any]]:
        """The first tree step's shared read of one warp in a block of ``threads`` 4-byte words:
        ``interleaved_strided`` (thread t reads word 2t: two lanes per even bank) and
        ``sequential`` (thread t reads word t + threads/2: one lane per bank). [] for 8-byte data."""
        if ITEMSIZE.get(dtype, 4) != 4:
            return []
        threads = int(self.manifest.params.get("threads", 256))
        out = []
        for stage, first in (("interleaved_strided", lambda t: 2 * t), ("sequential", lambda t: t + threads // 2)):
            words = [[first(t)] for t in range(32)]
            banks = [[w % 32 for w in lane] for lane in words]
            per_bank = [len({lane[0] for lane in words if lane[0] % 32 == b}) for b in range(32)]
            out.append({"stage": stage, "words": words, "banks": banks, "wavefronts": max(per_bank), "ideal": 1,
                        "pitch_words": 32, "rows": threads // 32,
                        "title": f"{stage}: first tree step of sdata[{threads}], one warp"})
        return out

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """float32 uniform in [1, 2); int32 uniform in [-100, 100] without 0. Never zero."""
        rng = cupy.random.default_rng(seed)
        if dtype == "int32":
            v = rng.integers(1, 101, size["n"], dtype=cupy.int32)
            sign = rng.integers(0, 2, size["n"], dtype=cupy.int32) * 2 - 1
            return v * sign
        return rng.random(size["n"], dtype=cupy.float32) + 1

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        """Result, ticket and two partial-sum regions; large enough for every stage at ``size``."""
        a = _region(size["n"], 32)
        return cupy.empty(PARTIALS + a + _region(a, 32), dtype=dtype)

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Reference:
        """Sums of ``inputs`` on the device, in float64 (int32: int64), without copying them to the
        host: see :class:`Reference`.

        The float32 bound is the stage's worst case ``h u / (1 - h u) * sum |x|`` less the float64
        reference's own worst case ``(n-1) u64 / (1 - (n-1) u64) * sum |x|`` (any summation order,
        u64 = 2^-53; Higham 4.2): a result within it is within the stage's bound of the exact sum,
        so the check is never weaker than one against the exact sum (at n = 2^28 the margin is
        2^-25 of sum |x|, 1.4 % of the bound of the shortest chain, h = 36)."""
        import numpy as np

        flat = inputs.ravel()
        if stage.op == "read":
            return Reference(np.uint32(_xor_fold(cupy, flat.view(cupy.uint32))), 0.0, "read")
        if flat.dtype == np.int32:
            total = int(cupy.sum(flat, dtype=cupy.int64))
            return Reference(np.int64((total + 2**31) % 2**32 - 2**31).astype(np.int32), 0.0, "sum")
        n = int(flat.size)
        h = geo.chain_length(stage, self.manifest, n)
        magnitude = float(cupy.abs(flat).sum(dtype=cupy.float64))
        own = max(n - 1, 0) * U64 / (1 - max(n - 1, 0) * U64) * magnitude
        bound = h * U32 / (1 - h * U32) * magnitude - own
        return Reference(float(cupy.sum(flat, dtype=cupy.float64)), bound, "sum", h)

    def compare(self, cupy: Any, out: Any, ref: Reference) -> Comparison:
        """``out[0]`` against the reference: bits for int32 and the read ceiling, the float32
        bound otherwise (a NaN, e.g. an unwritten poisoned result, never passes)."""
        import numpy as np

        if ref.op == "read":
            got = np.uint32(cupy.asnumpy(out[0:1].view(cupy.uint32))[0])
            ok = got == ref.value
            return Comparison(bool(ok), 0 if ok else 1, None if ok else (0,), f"{int(ref.value):#010x}",
                              f"{int(got):#010x}")
        got = cupy.asnumpy(out[0:1])[0]
        if out.dtype.kind == "i":
            ok = bool(got == ref.value)
            return Comparison(ok, 0 if ok else 1, None if ok else (0,), str(int(ref.value)), str(int(got)))
        err = abs(float(got) - ref.value)
        ok = bool(err <= ref.bound)  # False for NaN
        return Comparison(ok, 0 if ok else 1, None if ok else (0,), f"{ref.value:.9g} +- {ref.bound:.3g}",
                          f"{float(got):.9g} (error {err:.3g}, chain h = {ref.chain})")

    def normalize_source(self, source: str, stage_id: str) -> str:
        return source.replace(f"reduce_{stage_id}", "reduce_STAGE")


CASE = ReductionCase()
