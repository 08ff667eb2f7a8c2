"""The transpose with two deliberately broken stages, for the compute-sanitizer tests.

The transpose case's own launches, arrays and comparison (a user's case folder built on the
built-in case); only the kernels differ (broken.cu). Not a ladder: nobody times it.
"""

from __future__ import annotations

from profiler_report.cases.transpose import TransposeCase


class BrokenTransposeCase(TransposeCase):
    name = "transpose_broken"
    title = "matrix transpose with two classic barrier bugs (test case)"
    bench_module = ""


CASE = BrokenTransposeCase()
