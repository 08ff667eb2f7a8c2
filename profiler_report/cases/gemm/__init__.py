"""The third case: a matrix multiply C = A B (float32, row-major) on the CUDA cores, naive to
warptiling, against cuBLAS.

After S. Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance". Stages,
their expected effects and the ceiling (cuBLAS SGEMM through ``cupy.matmul``: a library call,
no kernel of the case's source) are in ``kernels/gemm/stages.toml``. The case is compute-bound:
its speed is read in TFLOP/s (2 M N K floating-point operations per launch), and its stages are
judged by the FMA pipe, register reuse and the roofline as much as by memory counters.

Buffers (:mod:`.launch`): one float32 input holding a header (M, N, K), A and B; the output is
C, M * N float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from profiler_report.cases.gemm import launch as geo
from profiler_report.errors import InputError
from profiler_report.model.base import Case, Comparison, Launch, Size, Step, Work
from profiler_report.model.manifest import Stage

#: float32 unit roundoff.
U32 = 2.0 ** -24
#: Largest root-mean-square error, in units of U32, of a float32 result relative to |A| |B| (each
#: element's error over its sum of |a b|). A statistical check on top of the worst-case bound, which
#: cannot tell TF32 from float32 at large K: float32 accumulation of the case's random inputs
#: leaves at most about 0.5 u in any order (sequential, blocked, BLAS; K = 1 to 16384), TF32 inputs
#: (10 mantissa bits) 46 u at K = 16384 and more below (measured with NumPy:
#: tests/cases/test_gemm_case.py).
RMS_LIMIT_U = 8.0


@dataclass(frozen=True)
class Reference:
    """The float64 product and how far a correct float32 result may lie from it, per element.

    ``value`` is A B computed in float64 on the GPU (cuBLAS DGEMM) from the float32 inputs;
    ``bound`` is ``gamma_K * (|A| |B|)`` with ``gamma_K = K u / (1 - K u)``, u = 2^-24: the
    worst-case error of any order of K float32 multiply-adds (Higham, Accuracy and Stability of
    Numerical Algorithms, 3.5), so it holds for every stage and peer. Both are M x N CuPy arrays.
    """

    value: Any
    bound: Any
    k: int


def views(inputs: Any, m: int, n: int, k: int) -> tuple[Any, Any]:
    """(A, B) as M x K and K x N views of the input buffer (:mod:`.launch`)."""
    a = inputs[geo.HEADER:geo.HEADER + m * k].reshape(m, k)
    off = geo.b_offset(m, k)
    return a, inputs[off:off + k * n].reshape(k, n)


def dims_of(cupy: Any, inputs: Any) -> tuple[int, int, int]:
    """(M, N, K) from the input buffer's header."""
    m, n, k = cupy.asnumpy(inputs[:3]).tolist()
    return int(m), int(n), int(k)


class GemmCase(Case):
    """``C = A B``, float32, A M x K, B K x N, row-major."""

    name = "gemm"
    bench_module = "profiler_report.cases.gemm.bench"
    title = "matrix multiply C = A B (float32, CUDA cores)"
    dims = ("m", "n", "k")
    launch_kinds = geo.LAUNCH_KINDS
    default_size = {"m": 4096, "n": 4096, "k": 4096}  # noqa: RUF012 (3 x 64 MiB, past the 60 MB L2)
    dtypes = ("float32",)
    work_unit = "TFLOP/s"
    compare_text = ("every element within gamma_K * (|A| |B|) of the float64 product of the float32 inputs "
                    "(cuBLAS DGEMM on the GPU), gamma_K = K u / (1 - K u), u = 2^-24: the worst-case error bound of "
                    "any order of K float32 multiply-adds (Higham, Accuracy and Stability of Numerical Algorithms, "
                    "3.5); a NaN never passes. And, since that bound cannot tell TF32 from float32 at large K, the "
                    "root-mean-square of each element's error over its sum |a b| within 8 u (float32 accumulation "
                    "of these inputs leaves about 0.5 u, TF32 inputs 46 u or more)")
    validation_text = ("Random input (A and B uniform in [-1, 1)), output poisoned with all-ones bytes (NaN) before "
                       "each run, every element compared with a GPU float64 reference: " + compare_text + ". Work "
                       "counted: 2 M N K floating-point operations; bytes (M K + K N + M N) * 4.")
    summary_columns = (
        "event_tflops", "pct_of_copy_kernel", "duration_us", "fma_pipe_pct", "global_load_efficiency_pct",
        "global_load_instructions", "shared_load_instructions", "ffma_per_shared_load",
        "shared_excessive_wavefronts", "achieved_occupancy_pct", "registers_per_thread",
    )
    stage_metrics = (
        "event_tflops", "pct_of_copy_kernel", "duration_us", "fma_pipe_pct", "fma_inst_pct", "sm_throughput_pct",
        "dram_throughput_pct_peak", "global_load_efficiency_pct", "global_load_instructions",
        "shared_load_instructions", "shared_store_instructions", "ffma_per_shared_load",
        "shared_excessive_wavefronts", "l1_hit_rate_pct", "l2_hit_rate_pct", "local_sectors",
        "achieved_occupancy_pct", "registers_per_thread", "shared_mem_per_block_bytes",
    )

    def sanitize_size(self) -> Size:
        """67 x 133 x 67: odd, no multiple of any tile or vector width."""
        return self.size({"m": 67, "n": 133, "k": 67})

    def work(self, stage: Stage, size: Size, dtype: str) -> Work:
        """``2 M N K`` flops; bytes read and written once each: ``(M K + K N + M N) * 4``."""
        m, n, k = size["m"], size["n"], size["k"]
        return Work((m * k + k * n + m * n) * 4, flops=2 * m * n * k)

    def launch(self, stage: Stage, size: Size, dtype: str) -> Launch:
        return geo.launch(stage, size["m"], size["n"])

    def kernel_args(self, stage: Stage, inputs: Any, output: Any, size: Size) -> tuple[Any, ...]:
        import numpy as np

        a, b = views(inputs, size["m"], size["n"], size["k"])
        return a, b, output, np.int32(size["m"]), np.int32(size["n"]), np.int32(size["k"])

    def steps(self, stage: Stage, inputs: Any, output: Any, size: Size, dtype: str) -> list[Step]:
        """One launch; the ``library`` ceiling one ``cupy.matmul`` into the output (cuBLAS SGEMM,
        float32 throughout: CuPy uses TF32 only when CUPY_TF32=1, which this call refuses)."""
        if stage.launch != "library":
            return super().steps(stage, inputs, output, size, dtype)
        import os

        from profiler_report.live.gpu import import_cupy

        cupy = import_cupy()
        if os.environ.get("CUPY_TF32", "0") != "0":
            raise InputError("CUPY_TF32 is set: cupy.matmul would run TF32, not the float32 SGEMM ceiling",
                             "unset CUPY_TF32 (or set it to 0) for the gemm case")
        m, n, k = size["m"], size["n"], size["k"]
        a, b = views(inputs, m, n, k)
        c = output.reshape(m, n)
        return [Step(call=lambda: cupy.matmul(a, b, out=c))]

    def make_input(self, cupy: Any, size: Size, dtype: str, seed: int) -> Any:
        """The header (M, N, K), then A and B uniform in [-1, 1) (never all zeros)."""
        m, n, k = size["m"], size["n"], size["k"]
        rng = cupy.random.default_rng(seed)
        buf = rng.random(geo.input_words(m, n, k), dtype=cupy.float32) * 2 - 1
        buf[:geo.HEADER] = 0
        buf[:3] = cupy.asarray([m, n, k], dtype=cupy.float32)
        return buf

    def make_output(self, cupy: Any, stage: Stage, size: Size, dtype: str) -> Any:
        return cupy.empty(size["m"] * size["n"], dtype=cupy.float32)

    def reference(self, cupy: Any, stage: Stage, inputs: Any) -> Reference:
        """See :class:`Reference`; M, N, K from the input's header."""
        m, n, k = dims_of(cupy, inputs)
        a, b = views(inputs, m, n, k)
        a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
        gamma = k * U32 / (1 - k * U32)
        return Reference(a64 @ b64, gamma * (cupy.abs(a64) @ cupy.abs(b64)), k)

    def compare(self, cupy: Any, out: Any, ref: Reference) -> Comparison:
        """Every element of ``out`` within the bound (NaN fails), and the root-mean-square error
        relative to |A| |B| within :data:`RMS_LIMIT_U` units of float32 roundoff (a reduced-precision
        product fails it); the first failure's (row, col)."""
        got = out.reshape(ref.value.shape).astype(cupy.float64)
        err = cupy.abs(got - ref.value)
        bad = ~(err <= ref.bound)
        count = int(bad.sum())
        if count:
            return self._wrong(cupy, bad, count, got, ref, "")
        gamma = ref.k * U32 / (1 - ref.k * U32)
        rel = err / cupy.maximum(ref.bound / gamma, 1e-300)  # error over sum |a b|, per element
        rms = float(cupy.sqrt(cupy.mean(rel * rel))) / U32
        if rms <= RMS_LIMIT_U:
            return Comparison(True)
        far = rel > RMS_LIMIT_U * U32
        return self._wrong(cupy, far, int(far.sum()), got, ref,
                           f"(rms error {rms:.1f} u over sum |a b|, float32 leaves <= {RMS_LIMIT_U:g} u: "
                           "reduced-precision inputs?)")

    @staticmethod
    def _wrong(cupy: Any, bad: Any, count: int, got: Any, ref: Reference, why: str) -> Comparison:
        """The failed comparison at the first element of ``bad``; ``why`` "" names its bound."""
        flat = int(cupy.argmax(bad.ravel()))
        r, c = divmod(flat, ref.value.shape[1])
        why = why or f"+- {float(ref.bound[r, c]):.3g}"
        return Comparison(False, count, (r, c), f"{float(ref.value[r, c]):.7g} {why}", f"{float(got[r, c]):.7g}")

    def normalize_source(self, source: str, stage_id: str) -> str:
        return source.replace(f"gemm_{stage_id}", "gemm_STAGE")


CASE = GemmCase()
