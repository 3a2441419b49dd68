"""Convolutions as GEMMs: what the eager path traces for aten.convolution and its backward.

torch-mlir lowers a convolution to one linalg loop nest with a reduction loop per input channel
and kernel dim, which the sim target can only tile as an elementwise op (a 3x3 conv of 64
channels ran at ~1.5 GFLOP/s), and PyTorch's decomposition of the backward scatters. Here every
case (1-3 spatial dims, any stride / padding / dilation / groups) becomes strided slices gathered
into columns - (C_in * kernel, N * out) - and one matmul (a batch matmul over the groups), which
the target tiles as a contraction:
- forward: out = W (C_out, C_in * kernel) @ columns(x padded);
- grad_weight: grad_out (C_out, N * out) @ columns(x padded)^T;
- grad_input: the transposed convolution of grad_out - zeros inserted between its elements
  (stride), padded by dilation * (kernel - 1) - padding, convolved with the channel-swapped
  weight read in reverse kernel order; the rows a strided forward never read get zeros.
A transposed forward is that same grad_input computation; its backward, a forward convolution and
a weight gradient with the roles of input and output gradient swapped. Half-precision operands are widened to
float32 before the matmuls and the results rounded once, as torch's CPU kernels accumulate (and
the sim target has no half arithmetic: an f16 matmul ran ~15x slower than the same in f32). Imported by retrace (compile workers
too: no torch_npu import).
"""

from __future__ import annotations

import itertools
import math

import torch
from torch.nn import functional as F

from npu_mlir.frontend.decompositions.precision import HALF


def pad_trailing(t: torch.Tensor, low: list[int], high: list[int]) -> torch.Tensor:
    """Zero-pad (negative: crop) the trailing len(low) dims of t."""
    spatial = len(low)
    crop = [slice(None)] * (t.dim() - spatial)
    for lo, hi, size in zip(low, high, t.shape[-spatial:]):
        crop.append(slice(max(-lo, 0), size - max(-hi, 0)))
    t = t[tuple(crop)]
    pads = []
    for lo, hi in zip(reversed(low), reversed(high)):
        pads += [max(lo, 0), max(hi, 0)]
    return F.pad(t, pads) if any(pads) else t


def dilate_trailing(t: torch.Tensor, stride: list[int]) -> torch.Tensor:
    """stride - 1 zeros between neighbouring elements of each trailing dim (scatter-free: pad + reshape)."""
    spatial = len(stride)
    for axis, s in enumerate(stride):
        if s == 1:
            continue
        dim = t.dim() - spatial + axis
        size = t.shape[dim]
        t = F.pad(t.unsqueeze(dim + 1), [0, 0] * (t.dim() - dim - 1) + [0, s - 1])
        t = t.flatten(dim, dim + 1).narrow(dim, 0, (size - 1) * s + 1)
    return t


def _windows(xt: torch.Tensor, kernel: list[int], stride: list[int], dilation: list[int], out: list[int],
             reverse: bool = False) -> list[torch.Tensor]:
    """The (C, N, *out) window of padded xt (C, N, *spatial) at each kernel offset, in row-major
    offset order (reversed: the kernel read back to front)."""
    windows = []
    for offset in _offsets(kernel, reverse):
        index = [slice(None), slice(None)]
        index += [slice(o * d, o * d + s * (size - 1) + 1, s) for o, d, s, size in zip(offset, dilation, stride, out)]
        windows.append(xt[tuple(index)])
    return windows


def _offsets(kernel: list[int], reverse: bool) -> list[tuple[int, ...]]:
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    return offsets[::-1] if reverse else offsets


def _joined(pieces: list[torch.Tensor], dim: int) -> torch.Tensor:
    """torch.cat(pieces, dim), never folded into a reshape of one piece.

    A GEMM operand or result that is a reshape gets the reshape folded into the matmul by
    linalg-fuse-elementwise-ops (fusion by expansion): the matmul becomes a many-dim contraction
    that ascend-raise-linalg does not raise to ascend.matmul, and it ran as an untiled
    broadcast-multiply-reduce on one core (~5x slower than torch). A concatenation stops the
    folding; a single piece is cut in two along `dim` and joined again for that reason.
    """
    if len(pieces) == 1 and pieces[0].shape[dim] > 1:
        half = pieces[0].shape[dim] // 2
        pieces = [pieces[0].narrow(dim, 0, half), pieces[0].narrow(dim, half, pieces[0].shape[dim] - half)]
    return torch.cat(pieces, dim) if len(pieces) > 1 else pieces[0]


def _images(rows: torch.Tensor, n: int, out: list[int]) -> torch.Tensor:
    """(N, C, *out) of a GEMM result (C, N * prod(out)), image by image (see _joined)."""
    size = math.prod(out)
    if n == 1:
        return _joined([rows], 0).reshape(1, rows.shape[0], *out)
    return torch.stack([rows[:, i * size:(i + 1) * size] for i in range(n)], 0).reshape(n, rows.shape[0], *out)


def _grouped_columns(windows: list[torch.Tensor], groups: int) -> torch.Tensor:
    """(groups, k * C / groups, N * out) of the k windows (C, N, *out): each group's rows
    kernel-offset-major, a concatenation along dim 1 (see _joined), so the batch matmul reading it
    is not fused with a reshape."""
    return _joined([window.reshape(groups, window.shape[0] // groups, -1) for window in windows], 1)


def _grouped_images(product: torch.Tensor, n: int, out: list[int]) -> torch.Tensor:
    """(N, groups * M, *out) of a batch matmul result (groups, M, N * prod(out)), image by image
    (slices, never a reshape of the product: see _joined)."""
    size = math.prod(out)
    groups, m = product.shape[:2]
    if n == 1:
        return _joined([product], 0).reshape(1, groups * m, *out)
    images = [product[:, :, i * size:(i + 1) * size] for i in range(n)]
    return torch.stack(images, 0).reshape(n, groups * m, *out)


def _gemm_conv(xt: torch.Tensor, weight: torch.Tensor, stride: list[int], dilation: list[int], groups: int,
               out: list[int], reverse: bool = False) -> torch.Tensor:
    """(N, C_out, *out) correlation of padded xt (C_in, N, *spatial) with weight (C_out, C_in / groups, *k).

    One GEMM: weight rows (C_out, k * C_in) @ columns (k * C_in, N * out), both kernel-offset-major
    so each is a concatenation of 2-D slices (see _joined). Grouped convolutions run as one batch
    matmul over the groups, its operands concatenations of 3-D slices in the same order (a slice
    per kernel offset, not per group: depthwise layers would need thousands).
    """
    kernel = list(weight.shape[2:])
    windows = _windows(xt, kernel, stride, dilation, out, reverse)
    c, n = xt.shape[:2]
    if groups == 1:
        cols = _joined([window.reshape(c, -1) for window in windows], 0)
        # Window j (read back to front when reversed) meets kernel offset j in natural order.
        rows = _joined([weight[(slice(None), slice(None), *o)] for o in _offsets(kernel, False)], 1)
        return _images(rows @ cols, n, out)
    cols = _grouped_columns(windows, groups)
    m, per_group = weight.shape[0] // groups, weight.shape[1]
    rows = _joined([weight[(slice(None), slice(None), *o)].reshape(groups, m, per_group)
                    for o in _offsets(kernel, False)], 2)
    return _grouped_images(torch.bmm(rows, cols), n, out)


def _depthwise(groups: int, c_in: int, c_out: int) -> bool:
    """One input and one output channel per group: no GEMM is left. A depthwise layer runs as a sum
    of per-channel scaled windows (its weight gradient: one reduction per kernel offset) - vector
    kernels streaming the image once, where the batch matmul over the groups had register tiles
    of 1 x 9 and gathered 9 copies of the image into columns first."""
    return groups > 1 and groups == c_in == c_out


def _depthwise_conv(x: torch.Tensor, weight: torch.Tensor, stride: list[int], dilation: list[int], out: list[int],
                    reverse: bool = False) -> torch.Tensor:
    """(N, C, *out) correlation of padded x (N, C, *spatial) with a depthwise weight (C, 1, *k)."""
    kernel = list(weight.shape[2:])
    # Window j (read back to front when reversed) meets kernel offset j in natural order.
    taps = [weight[(slice(None), 0, *o)].reshape(-1, *([1] * len(kernel))) for o in _offsets(kernel, False)]
    return sum(window * tap for window, tap in zip(_windows(x, kernel, stride, dilation, out, reverse), taps))


def _out_sizes(spatial: list[int], kernel: list[int], stride: list[int], padding: list[int],
               dilation: list[int]) -> list[int]:
    return [(size + 2 * p - d * (k - 1) - 1) // s + 1
            for size, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)]


def _swap_channels(weight: torch.Tensor, groups: int) -> torch.Tensor:
    """(A, B / groups, *k) -> (B, A / groups, *k), within each group."""
    a, b_per_group = weight.shape[:2]
    grouped = weight.reshape(groups, a // groups, b_per_group, *weight.shape[2:]).transpose(1, 2)
    return grouped.reshape(groups * b_per_group, a // groups, *weight.shape[2:])


def _transposed(grad: torch.Tensor, weight: torch.Tensor, stride: list[int], pad_low: list[int],
                dilation: list[int], groups: int, sizes: list[int]) -> torch.Tensor:
    """The transposed convolution of grad (N, C_out, *out) with weight (C_out, C_in / groups, *k): the
    input gradient (N, C_in, *sizes) of the forward convolution whose input was padded by pad_low in
    front (the back is whatever reaches sizes)."""
    if any(s > 1 for s in stride) and all(d == 1 for d in dilation):
        return _phases(grad, weight, stride, pad_low, groups, sizes)
    kernel, out = list(weight.shape[2:]), list(grad.shape[2:])
    low = [d * (k - 1) - p for k, p, d in zip(kernel, pad_low, dilation)]
    high = [size + p - (o - 1) * s - 1 for size, p, o, s in zip(sizes, pad_low, out, stride)]
    depthwise = _depthwise(groups, weight.shape[0], weight.shape[1] * groups)
    spread = pad_trailing(dilate_trailing(grad if depthwise else grad.transpose(0, 1), stride), low, high)
    ones = [1] * len(kernel)
    if depthwise:  # its weight is its own channel swap
        return _depthwise_conv(spread, weight, ones, dilation, sizes, reverse=True)
    return _gemm_conv(spread, _swap_channels(weight, groups), ones, dilation, groups, sizes, reverse=True)


def _phases(grad: torch.Tensor, weight: torch.Tensor, stride: list[int], pad_low: list[int], groups: int,
            sizes: list[int]) -> torch.Tensor:
    """_transposed with stride > 1 (dilation 1) as stride-1 transposed convolutions, one per phase.

    Input element j (of one spatial dim) gathers grad[q - m] * weight[r + m * s] over m, with
    r = (j + pad_low) mod s and q = (j + pad_low) // s: the elements of one phase r are a
    stride-1 transposed convolution of grad with the taps r, r + s, ... of the kernel, and the
    phases interleave. Spreading grad with s - 1 zeros between its elements instead made every
    GEMM and its columns s^2 larger, three quarters of them zeros at stride 2 (ResNet-18's
    layer2 3x3/2 input gradient: an 1152 x 25088 column matrix where the phases need 4 of
    128 x 6272 ... 512 x 6272).
    """
    n, c_in = grad.shape[0], weight.shape[1] * groups
    kernel = list(weight.shape[2:])
    blocks = [-(-size // s) for size, s in zip(sizes, stride)]  # each phase's extent, padded to the longest
    pieces: dict[tuple[int, ...], torch.Tensor] = {}
    for taps in itertools.product(*(range(s) for s in stride)):
        first = [-(-(p - r) // s) for p, r, s in zip(pad_low, taps, stride)]  # q of the phase's first element
        # The phase's first element, j = first * s + r - pad_low, is in [0, s): its place in the interleave.
        place = tuple(q * s + r - p for q, r, s, p in zip(first, taps, stride, pad_low))
        extent = [-(-(size - j) // s) for size, j, s in zip(sizes, place, stride)]
        if any(r >= k for r, k in zip(taps, kernel)):  # no tap of this phase: zeros
            piece = grad.new_zeros(n, c_in, *extent)
        else:
            sub = weight
            for axis, (r, s) in enumerate(zip(taps, stride)):
                sub = _every(sub, 2 + axis, r, s)
            piece = _transposed(grad, sub, [1] * len(kernel), first, [1] * len(kernel), groups, extent)
        pieces[place] = pad_trailing(piece, [0] * len(kernel), [b - e for b, e in zip(blocks, extent)])
    return _interleave(pieces, stride, sizes)


def _every(t: torch.Tensor, dim: int, start: int, step: int) -> torch.Tensor:
    """t[..., start::step, ...] along dim as a concatenation of unit slices: the sim target compiled a
    strided slice of a 512 x 256 x 3 x 3 weight (two stride-2 dims) into code LLVM took minutes over."""
    picked = range(start, t.shape[dim], step)
    if step == 1 or len(picked) == 1:
        return t.narrow(dim, start, len(picked))
    return torch.cat([t.narrow(dim, i, 1) for i in picked], dim)


def _interleave(pieces: dict[tuple[int, ...], torch.Tensor], stride: list[int], sizes: list[int]) -> torch.Tensor:
    """(N, C, *sizes) whose element j (per spatial dim) is pieces[j mod s][j // s]: the last dim's
    phases stacked innermost and merged, then the next dim's (concatenations; the merges are views)."""
    spatial = len(stride)
    for axis in reversed(range(spatial)):
        dim = 2 + axis
        grouped: dict[tuple[int, ...], list[torch.Tensor]] = {}
        for place, piece in sorted(pieces.items()):
            grouped.setdefault(place[:axis], []).append(piece)
        pieces = {}
        for place, parts in grouped.items():
            joined = torch.stack(parts, dim + 1) if len(parts) > 1 else parts[0].unsqueeze(dim + 1)
            pieces[place] = joined.flatten(dim, dim + 1)
    whole = pieces[()]
    return whole[(slice(None), slice(None), *(slice(0, size) for size in sizes))]


def _live_kernel(sizes: list[int], kernel: list[int], stride: list[int], padding: list[int], dilation: list[int],
                 out: list[int]) -> tuple[list[slice], list[int], list[int]]:
    """The kernel offsets a convolution's windows need, per spatial dim, and the padding that leaves.

    A kernel offset whose window (offset * dilation + stride * i over the outputs i) reads only
    padding multiplies zeros: forward, input and weight gradient alike. On small images most do -
    at 1x1, a 3x3 kernel with padding 1 has one live offset of 9 (ResNet-18's layer4 at 32x32
    input), and the GEMMs read 9x the columns and weights they need. Each dim keeps its first to
    last live offset; the input is then padded by (low, high) around the remaining windows (a
    negative amount crops rows no window reads).
    """
    live, low, high = [], [], []
    for size, k, s, p, d, o in zip(sizes, kernel, stride, padding, dilation, out):
        hits = [t for t in range(k) if any(p <= t * d + s * i < p + size for i in range(o))] or list(range(k))
        first, last = hits[0], hits[-1]
        live.append(slice(first, last + 1))
        low.append(p - first * d)
        high.append((o - 1) * s + (last - first) * d + 1 - size - low[-1])
    return live, low, high


def convolution(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: list[int],
                padding: list[int], dilation: list[int], transposed: bool, output_padding: list[int],
                groups: int) -> torch.Tensor:
    dtype = input.dtype
    input, weight, bias = _opmath(input, weight, bias)
    spatial = input.dim() - 2
    stride, padding, dilation = _expand(stride, spatial), _expand(padding, spatial), _expand(dilation, spatial)
    kernel = list(weight.shape[2:])
    if transposed:
        sizes = [(o - 1) * s + d * (k - 1) + 1 - 2 * p + e for o, s, d, k, p, e in
                 zip(input.shape[2:], stride, dilation, kernel, padding, _expand(output_padding, spatial))]
        out = _transposed(input, weight, stride, padding, dilation, groups, sizes)
    else:
        sizes = _out_sizes(list(input.shape[2:]), kernel, stride, padding, dilation)
        live, low, high = _live_kernel(list(input.shape[2:]), kernel, stride, padding, dilation, sizes)
        weight = weight[(slice(None), slice(None), *live)]
        if _depthwise(groups, input.shape[1], weight.shape[0]):
            out = _depthwise_conv(pad_trailing(input, low, high), weight, stride, dilation, sizes)
        else:
            out = _gemm_conv(pad_trailing(input.transpose(0, 1), low, high), weight, stride, dilation, groups, sizes)
    if bias is not None:
        out = out + bias.reshape(1, -1, *([1] * spatial))
    return out.to(dtype)


def _opmath(*tensors: torch.Tensor) -> list[torch.Tensor]:
    return [t.float() if t is not None and t.dtype in HALF else t for t in tensors]


def _expand(values: list[int], spatial: int) -> list[int]:
    return list(values) * spatial if len(values) == 1 else list(values)


def convolution_backward(grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                         bias_sizes: list[int] | None, stride: list[int], padding: list[int], dilation: list[int],
                         transposed: bool, output_padding: list[int], groups: int,
                         output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if transposed:
        # <grad, conv_transpose(x, W)> = <conv(grad, W), x>: the input gradient is a forward convolution
        # of grad, the weight gradient that of conv(grad, W) with x as its output gradient.
        grad_input = convolution(grad_output, weight, None, stride, padding, dilation, False, [0], groups)
        # output_padding rows reach no input element (with stride 1 and dilation > 1 they add windows)
        grad_input = grad_input[(slice(None), slice(None), *(slice(0, n) for n in input.shape[2:]))]
        grad_weight = convolution_backward(input, grad_output, weight, None, stride, padding, dilation, False, [0],
                                           groups, [False, True, False])[1]
        grad_bias = grad_output.sum([0] + list(range(2, grad_output.dim())))
        return grad_input, grad_weight, grad_bias
    dtype = input.dtype
    grad_output, input, weight = _opmath(grad_output, input, weight)
    spatial = input.dim() - 2
    stride, padding, dilation = _expand(stride, spatial), _expand(padding, spatial), _expand(dilation, spatial)
    kernel, out = list(weight.shape[2:]), list(grad_output.shape[2:])
    # A kernel cannot return an undefined tensor: a gradient output_mask leaves out is zeros (cheap,
    # never computed), which csrc/aten/ConvolutionOps.cpp returns as None - the input of a first
    # layer needs none, and its is the costliest; a frozen layer needs no weight gradient.
    sizes = list(input.shape[2:])
    live, low, high = _live_kernel(sizes, kernel, stride, padding, dilation, out)
    if output_mask[0]:
        grad_input = _transposed(grad_output, weight[(slice(None), slice(None), *live)], stride, low, dilation,
                                 groups, sizes)
    else:
        grad_input = torch.zeros_like(input)
    if output_mask[1]:
        grad_weight = _weight_gradient(grad_output, input, [s.stop - s.start for s in live], stride, low, high,
                                       dilation, groups)
        # The dead offsets' gradient is zero.
        pads = [side for s, k in zip(reversed(live), reversed(kernel)) for side in (s.start, k - s.stop)]
        grad_weight = F.pad(grad_weight, pads) if any(pads) else grad_weight
    else:
        grad_weight = torch.zeros_like(weight)
    if output_mask[2]:
        grad_bias = grad_output.sum([0] + list(range(2, grad_output.dim())))
    else:
        grad_bias = grad_output.new_zeros(grad_output.shape[1])
    return grad_input.to(dtype), grad_weight.to(dtype), grad_bias.to(dtype)


def _weight_gradient(grad_output: torch.Tensor, input: torch.Tensor, kernel: list[int], stride: list[int],
                     low: list[int], high: list[int], dilation: list[int], groups: int) -> torch.Tensor:
    """(C_out, C_in / groups, *kernel): columns (k * C_in, N * out) @ grad_out rows (N * out, C_out), the
    input padded by (low, high).

    Both operands are read row by row (grad_out (C_out, N * out) @ columns^T would read the columns
    against their layout: 2-3x slower), so grad_out is transposed image by image into the operand.
    """
    out = list(grad_output.shape[2:])
    c_in, c_out = input.shape[1], grad_output.shape[1]
    if _depthwise(groups, c_in, c_out):
        # One reduction per kernel offset: its window of the padded input times the output gradient.
        windows = _windows(pad_trailing(input, low, high), kernel, stride, dilation, out)
        dims = [0] + list(range(2, grad_output.dim()))
        return torch.stack([(window * grad_output).sum(dims) for window in windows], -1).reshape(c_out, 1, *kernel)
    windows = _windows(pad_trailing(input.transpose(0, 1), low, high), kernel, stride, dilation, out)
    if groups == 1:
        cols = _joined([window.reshape(c_in, -1) for window in windows], 0)
        if math.prod(out) == 1:  # (N, C_out) as it is: no per-image transposes
            rows = _joined([grad_output.reshape(grad_output.shape[0], c_out)], 1)
        else:
            rows = _joined([image.reshape(c_out, -1).t() for image in grad_output.unbind(0)], 0)
        product = cols @ rows  # (k * C_in, C_out), kernel-offset-major rows
        per_offset = [product[o * c_in:(o + 1) * c_in] for o in range(len(windows))]
        stacked = torch.stack(per_offset, -1) if len(per_offset) > 1 else _joined(per_offset, 0).unsqueeze(-1)
        return stacked.permute(1, 0, 2).reshape(c_out, c_in, *kernel)
    # (groups, k * C_in / groups, N * out) @ (groups, N * out, C_out / groups), operands joined and
    # the product sliced per kernel offset, as in _gemm_conv.
    cols = _grouped_columns(windows, groups)
    m, per_group = c_out // groups, c_in // groups
    rows = _joined([image.reshape(groups, m, -1).transpose(1, 2) for image in grad_output.unbind(0)], 1)
    product = torch.bmm(cols, rows)
    per_offset = [product[:, o * per_group:(o + 1) * per_group] for o in range(len(windows))]
    stacked = torch.stack(per_offset, -1) if len(per_offset) > 1 else _joined(per_offset, 1).unsqueeze(-1)
    return stacked.permute(0, 2, 1, 3).reshape(c_out, per_group, *kernel)


aten = torch.ops.aten
RETRACED = {aten.convolution.default: convolution, aten.convolution_backward.default: convolution_backward}
