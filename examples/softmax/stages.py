"""Row-wise softmax in four stages, each a function ``(x, out)`` of torch tensors (see stages.toml).

A stage writes ``out`` or returns the result. The tool calls each one outside the profiled range
first (validation and warm-up: torch.compile compiles and Triton autotunes there), then once
inside the NVTX range ncu profiles, every kernel the call launches included.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def softmax_decomposed(x: torch.Tensor) -> torch.Tensor:
    """max, sub, exp, sum, div: one kernel each in eager mode, each through DRAM."""
    m = torch.amax(x, dim=-1, keepdim=True)
    e = torch.exp(x - m)
    return e / torch.sum(e, dim=-1, keepdim=True)


def eager(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return softmax_decomposed(x)


compiled_softmax = torch.compile(softmax_decomposed, dynamic=False)


def compiled(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return compiled_softmax(x)


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # One program per row: the row is read once into registers, reduced twice there, written once.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def triton_row(x: torch.Tensor, out: torch.Tensor) -> None:
    rows, cols = x.shape
    softmax_row_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))


#: The same kernel, its warps per row chosen by timing 4, 8, 16 and 32 (outside the profiled call).
softmax_row_tuned = triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (4, 8, 16, 32)],
                                    key=["n_cols"])(softmax_row_kernel)


def triton_tuned(x: torch.Tensor, out: torch.Tensor) -> None:
    rows, cols = x.shape
    softmax_row_tuned[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # The ceiling: the same bytes read once and written once, nothing computed.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def copy(x: torch.Tensor, out: torch.Tensor) -> None:
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)


def torch_softmax(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)
