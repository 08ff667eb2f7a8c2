"""The fourth case: a bf16 matrix multiply C = A B^T on the tensor cores (Hopper, sm_90a), float32
accumulation, from warp-level mma.sync to wgmma with a wide tile, against cuBLAS.

After Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog". Stages, their expected
effects and the ceiling (cuBLAS through ``torch.matmul``: a library call, no kernel of the case's
source) are in ``kernels/hgemm/stages.toml``. Speed is read in TFLOP/s (2 M N K per launch).

Layout ("TN", :mod:`.launch`): A is M x K row-major, B is given as N x K row-major, C is M x N
row-major bf16; A's and B's row stride is K rounded up to a multiple of 8, zero-padded by
:meth:`HgemmCase.make_input`. bf16 values are held as their 16-bit words (CuPy has no bfloat16).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from profiler_report.cases.hgemm import launch as geo
from profiler_report.cases.hgemm import tma
from profiler_report.errors import InputError
from profiler_report.model.base import Case, Comparison, Launch, Size, Step, Work
from profiler_report.model.manifest import Stage

#: Unit of the float32 accumulation's bound: 2^-23, a float32 adder that truncates (twice the
#: 2^-24 of rounding to nearest), so the bound holds however the tensor cores round partial sums.
U_ACC = 2.0 ** -23
#: bf16 unit roundoff (8 significant bits): the one rounding of each output element.
U_BF16 = 2.0 ** -8


@dataclass(frozen=True)
class Reference:
    """The float64 product and how far a correct bf16 result may lie from it, per element.

    ``value`` is A B^T in float64 from the bf16 inputs (exact products; cuBLAS DGEMM on the GPU);
    ``bound`` is ``g + 2^-8 (|value| + g)`` with ``g = gamma_K (|A| |B|^T)``, ``gamma_K = K u /
    (1 - K u)``, u = 2^-23: the worst-case error of any order of K float32 multiply-adds (Higham,
    Accuracy and Stability of Numerical Algorithms, 3.5), then the output's rounding to bf16.
    Both are M x N arrays.
    """

    value: Any
    bound: Any


def views(inputs: Any, m: int, n: int, k: int) -> tuple[Any, Any]:
    """(A, B) as M x ld and N x ld views of the input buffer's words (ld = :func:`.launch.row_stride`;
    the columns from K on are the zero padding)."""
    ld = geo.row_stride(k)
    a = inputs[geo.HEADER:geo.HEADER + m * ld].reshape(m, ld)
    off = geo.b_offset(m, k)
    return a, inputs[off:off + n * ld].reshape(n, ld)


def dims_of(cupy: Any, inputs: Any) -> tuple[int, int, int]:
    """(M, N, K) from the input buffer's header (three little-endian uint32 in six words)."""
    m, n, k = cupy.asnumpy(inputs[:6].view(cupy.uint32)).tolist()
    return int(m), int(n), int(k)


def bf16_words(cupy: Any, x: Any) -> Any:
    """float32 values rounded to bf16 (to nearest, ties to even; finite inputs) as uint16 words."""
    bits = x.astype(cupy.float32).view(cupy.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(cupy.uint16)


def words_to_float64(cupy: Any, words: Any) -> Any:
    """bf16 words (uint16) as float64 values (exact)."""
    return (words.astype(cupy.uint32) << 16).view(cupy.float32).astype(cupy.float64)


def _torch() -> Any:
    """torch, for the cuBLAS ceiling, with bf16 reductions kept in float32 (no split-K in bf16).

    Raises:
        InputError: torch is not installed.
    """
    try:
        import torch
    except ImportError as exc:
        raise InputError(f"the hgemm ceiling (cuBLAS bf16) runs through torch, which is not installed ({exc})",
                         "install torch with CUDA on the GPU machine") from exc
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    return torch


class HgemmCase(Case):
    """``C = A B^T``, bf16 in, float32 accumulation, bf16 out; A M x K, B N x K, both row-major."""

    name = "hgemm"
    bench_module = "profiler_report.cases.hgemm.bench"
    title = "bf16 matrix multiply C = A B^T (float32 accumulation, tensor cores, sm_90a)"
    dims = ("m", "n", "k")
    launch_kinds = geo.LAUNCH_KINDS
    default_size = {"m": 8192, "n": 8192, "k": 8192}  # noqa: RUF012 (3 x 128 MiB, past the 60 MB L2)
    dtypes = ("bfloat16",)
    work_unit = "TFLOP/s"
    nvrtc_options = ("-arch=sm_90a",)  # wgmma needs the architecture-specific target
    compare_text = ("every element within g + 2^-8 (|C| + g) of the float64 product of the bf16 inputs (cuBLAS "
                    "DGEMM on the GPU), g = gamma_K (|A| |B^T|), gamma_K = K u / (1 - K u), u = 2^-23: the "
                    "worst-case error of any order of K float32 multiply-adds (Higham, Accuracy and Stability of "
                    "Numerical Algorithms, 3.5, with a truncating adder's unit), then the output's rounding to bf16 "
                    "(2^-8 of its magnitude); a NaN never passes")
    validation_text = ("Random input (A and B uniform in [-1, 1), rounded to bf16; rows padded with zeros to a "
                       "multiple of 8 elements), output poisoned with all-ones bytes (NaN) before each run, every "
                       "element compared with a GPU float64 reference: " + compare_text + ". Layout: A M x K "
                       "row-major, B given as N x K row-major (TN), C M x N row-major. Work counted: 2 M N K "
                       "floating-point operations; bytes (M K + N K + M N) * 2.")
    summary_columns = (
        "event_tflops", "pct_of_copy_kernel", "duration_us", "tensor_pipe_pct", "gmma_inst_pct",
        "achieved_occupancy_pct", "registers_per_thread", "shared_mem_per_block_bytes", "local_sectors",
    )
    stage_metrics = (
        "event_tflops", "pct_of_copy_kernel", "duration_us", "tensor_pipe_pct", "gmma_inst_pct", "sm_throughput_pct",
        "dram_throughput_pct_peak", "l2_hit_rate_pct", "shared_load_instructions", "shared_excessive_wavefronts",
        "barrier_stall_per_issue", "local_sectors", "achieved_occupancy_pct", "registers_per_thread",
        "shared_mem_per_block_bytes",
    )

    def sanitize_size(self) -> Size:
        """67 x 133 x 67: odd, no multiple of any tile or of the 8-element row padding."""
        return self.size({"m": 67, "n": 133, "k": 67})

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """``2 M N K`` flops; bytes read and written once each: ``(M K + N K + M N) * 2``."""
        m, n, k = size["m"], size["n"], size["k"]
        return Work((m * k + n * k + m * n) * 2, flops=2 * m * n * k)

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        return geo.launch(stage, size["m"], size["n"])

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        import numpy as np

        m, n, k = size["m"], size["n"], size["k"]
        a, b = views(inputs, m, n, k)
        ld = geo.row_stride(k)
        if stage.launch in geo.TMA_KINDS:  # the operands as tensor maps: boxes of one tile's rows x 64
            bm, bn = geo.TILES[stage.launch]
            a, b = tma.encode(a, bm), tma.encode(b, bn)
        return a, b, output, np.int32(m), np.int32(n), np.int32(k), np.int32(ld)

    def steps(self, stage: Stage, inputs: Any, output: Any, size: Size, dtype: str) -> list[Step]:
        """One launch; the ``library`` ceiling one ``torch.matmul(A, B^T)`` into the output (cuBLAS,
        bf16 in and out, float32 accumulation, reduced-precision reductions off)."""
        if stage.launch != "library":
            return super().steps(stage, inputs, output, size, dtype)
        from profiler_report.util.tensors import as_tensor

        torch = _torch()
        m, n, k = size["m"], size["n"], size["k"]
        a, b = views(inputs, m, n, k)
        ta, tb = as_tensor(a, "bfloat16")[:, :k], as_tensor(b, "bfloat16")[:, :k]
        tc = as_tensor(output.reshape(m, n), "bfloat16")
        return [Step(call=lambda: torch.matmul(ta, tb.t(), out=tc))]

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """The header (M, N, K), then A and B uniform in [-1, 1) rounded to bf16 (never all zeros),
        each row zero-padded to the stride."""
        m, n, k = size["m"], size["n"], size["k"]
        buf = cupy.zeros(geo.input_words(m, n, k), dtype=cupy.uint16)
        buf[:6] = cupy.asarray([m, n, k], dtype=cupy.uint32).view(cupy.uint16)
        rng = cupy.random.default_rng(seed)
        a, b = views(buf, m, n, k)
        a[:, :k] = bf16_words(cupy, rng.random((m, k), dtype=cupy.float32) * 2 - 1)
        b[:, :k] = bf16_words(cupy, rng.random((n, k), dtype=cupy.float32) * 2 - 1)
        return buf

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        return cupy.empty(size["m"] * size["n"], dtype=cupy.uint16)

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Reference:
        """See :class:`Reference`; M, N, K from the input's header."""
        m, n, k = dims_of(cupy, inputs)
        a, b = views(inputs, m, n, k)
        a64, b64 = words_to_float64(cupy, a[:, :k]), words_to_float64(cupy, b[:, :k])
        value = a64 @ b64.T
        gamma = k * U_ACC / (1 - k * U_ACC)
        acc = gamma * (cupy.abs(a64) @ cupy.abs(b64).T)
        return Reference(value, acc + U_BF16 * (cupy.abs(value) + acc))

    def compare(self, cupy: Any, out: Any, ref: Reference) -> Comparison:
        """Every element of ``out`` (bf16 words) within the bound (NaN fails); the first failure's
        (row, col)."""
        got = words_to_float64(cupy, out.reshape(ref.value.shape))
        bad = ~(cupy.abs(got - ref.value) <= ref.bound)
        count = int(bad.sum())
        if not count:
            return Comparison(True)
        r, c = divmod(int(cupy.argmax(bad.ravel())), ref.value.shape[1])
        return Comparison(False, count, (r, c), f"{float(ref.value[r, c]):.7g} +- {float(ref.bound[r, c]):.3g}",
                          f"{float(got[r, c]):.7g}")

    def normalize_source(self, source: str, stage_id: str) -> str:
        return source.replace(f"hgemm_{stage_id}", "hgemm_STAGE")


CASE = HgemmCase()
