"""The stages of this Python ladder: y = 2 * relu(x), each a function (x, out) of torch tensors.

Made by ``profiler-report new-case --python``. A stage writes ``out`` or returns the result.
The tool calls each one outside the profiled range first (validation and warm-up: torch.compile
compiles and Triton compiles or autotunes there), then once inside the NVTX range ncu profiles,
every kernel the call launches included. Edit the functions (and stages.toml) into your ladder.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def eager(x: torch.Tensor, out: torch.Tensor) -> None:
    torch.mul(torch.relu(x), 2, out=out)


@triton.jit
def relu2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0) * 2, mask=mask)


def fused(x: torch.Tensor, out: torch.Tensor) -> None:
    n = x.numel()
    relu2_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)


compiled_relu2 = torch.compile(lambda x: torch.relu(x) * 2, dynamic=False)


def compiled(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return compiled_relu2(x)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def copy(x: torch.Tensor, out: torch.Tensor) -> None:
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
