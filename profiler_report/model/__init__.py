"""The case seam, below every other layer: :class:`~.base.Case` (what a kernel ladder supplies), the
manifest (``stages.toml``: stages, expected effects, the ceiling), NVTX range names, experiments,
the case registry and case folders (:mod:`.registry`) and ``new-case`` (:mod:`.scaffold`).
"""
