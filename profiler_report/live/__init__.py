"""The GPU side: build kernels with NVRTC, validate and event-time them (CuPy), drive ``ncu`` and
compute-sanitizer on a live run, fan sweeps out over GPUs or Dask workers, and check the machine
(``doctor``).
"""
