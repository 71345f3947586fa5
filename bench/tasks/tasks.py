"""kforge's benchmark tasks, in the spirit of KernelBench levels 1 and 2.

Each task is one computation with three definitions that must agree:
  - ``mlir(shape)``: the payload kforge tunes (linalg on tensors, importer form);
  - ``numpy(*inputs)``: a NumPy definition (float64), used to check the payloads on the CPU in CI;
  - ``torch(*inputs)``: the PyTorch definition the benchmark compares against on the GPU (eager and
    torch.compile), written as a PyTorch user would.
Shapes are realistic (``shape``) with a small variant (``small``) for CPU checks. fp32 throughout; GELU is
the tanh approximation (torch's ``approximate="tanh"``), and fp32 tasks are never computed in tf32.

    python3 bench/tasks/tasks.py --list
    python3 bench/tasks/tasks.py --write DIR [--small]   # DIR/<task>.mlir
"""
import argparse
import math
import os
import sys

import numpy as np

# --- MLIR building blocks ---------------------------------------------------------------------------

_GELU_BODY = """    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.044715 : f32
    %k = arith.constant 0.7978845608 : f32
    %x2 = arith.mulf {x}, {x} : f32
    %x3 = arith.mulf %x2, {x} : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %inner = arith.addf {x}, %cx3 : f32
    %arg = arith.mulf %k, %inner : f32
    %t = math.tanh %arg : f32
    %onep = arith.addf %one, %t : f32
    %hx = arith.mulf %half, {x} : f32
    {y} = arith.mulf %hx, %onep : f32"""


def _t(*dims, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in dims) + f"x{dtype}>"


def _accumulate(op, a_type, b_type, dims, result="%mm"):
    """A zero fp32 accumulator of shape ``dims`` and the contraction ``op`` (linalg.matmul, linalg.batch_matmul) of
    %A and %B into it: the body every matmul-bound payload starts with."""
    return (f"  %zero = arith.constant 0.0 : f32\n  %empty = tensor.empty() : {_t(*dims)}\n"
            f"  %init = linalg.fill ins(%zero : f32) outs(%empty : {_t(*dims)}) -> {_t(*dims)}\n"
            f"  {result} = {op} ins(%A, %B : {a_type}, {b_type}) outs(%init : {_t(*dims)}) -> {_t(*dims)}\n")


def _gemm_prologue(name, m, n, k, extra_args=(), result=None):
    args = [f"%A: {_t(m, k)}", f"%B: {_t(k, n)}"] + [f"%{a}: {t}" for a, t in extra_args]
    return (f"#map_2d = affine_map<(i, j) -> (i, j)>\n#map_col = affine_map<(i, j) -> (j)>\n"
            f"#map_row = affine_map<(i, j) -> (i)>\n"
            f"func.func @{name}({', '.join(args)}) -> {result or _t(m, n)} {{\n"
            + _accumulate("linalg.matmul", _t(m, k), _t(k, n), (m, n)))


def _elementwise(result, inputs, maps, body, out_shape, yielded):
    """A 2-D linalg.generic; ``inputs`` are (value, type) pairs, ``body`` uses %a0, %a1, ... and yields ``yielded``."""
    ins = ", ".join(v for v, _ in inputs)
    types = ", ".join(t for _, t in inputs)
    block_args = ", ".join(f"%a{i}: f32" for i in range(len(inputs))) + ", %out: f32"
    indexing = ", ".join(maps + ["#map_2d"])
    return (f"  {result} = linalg.generic {{indexing_maps = [{indexing}], iterator_types = [\"parallel\", \"parallel\"]}}\n"
            f"      ins({ins} : {types}) outs(%empty : {out_shape}) {{\n"
            f"  ^bb0({block_args}):\n{body}\n    linalg.yield {yielded} : f32\n  }} -> {out_shape}\n")


def _row_reduce(result, source, shape, init, combine, name):
    m, n = shape
    return (f"  %{name}_init = linalg.fill ins({init} : f32) outs(%empty_row : {_t(m)}) -> {_t(m)}\n"
            f"  {result} = linalg.generic {{indexing_maps = [#map_2d, #map_row], iterator_types = [\"parallel\", \"reduction\"]}}\n"
            f"      ins({source} : {_t(m, n)}) outs(%{name}_init : {_t(m)}) {{\n"
            f"  ^bb0(%x: f32, %acc: f32):\n    %r = {combine} %x, %acc : f32\n    linalg.yield %r : f32\n"
            f"  }} -> {_t(m)}\n")


# --- Level 1 -------------------------------------------------------------------------------------------

def _matmul_mlir(name):
    def build(shape):
        m, n, k = shape
        return _gemm_prologue(name, m, n, k) + f"  return %mm : {_t(m, n)}\n}}\n"
    return build


def _batch_matmul_mlir(shape):
    b, m, n, k = shape
    return (f"func.func @batch_matmul(%A: {_t(b, m, k)}, %B: {_t(b, k, n)}) -> {_t(b, m, n)} {{\n"
            + _accumulate("linalg.batch_matmul", _t(b, m, k), _t(b, k, n), (b, m, n), result="%r")
            + f"  return %r : {_t(b, m, n)}\n}}\n")


def _matvec_mlir(shape):
    m, k = shape
    return (f"func.func @matvec(%A: {_t(m, k)}, %x: {_t(k)}) -> {_t(m)} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n  %empty = tensor.empty() : {_t(m)}\n"
            f"  %init = linalg.fill ins(%zero : f32) outs(%empty : {_t(m)}) -> {_t(m)}\n"
            f"  %r = linalg.matvec ins(%A, %x : {_t(m, k)}, {_t(k)}) outs(%init : {_t(m)}) -> {_t(m)}\n"
            f"  return %r : {_t(m)}\n}}\n")


def _unary_mlir(name, body):
    def build(shape):
        m, n = shape
        return (f"#map_2d = affine_map<(i, j) -> (i, j)>\n"
                f"func.func @{name}(%X: {_t(m, n)}) -> {_t(m, n)} {{\n"
                f"  %zero = arith.constant 0.0 : f32\n  %empty = tensor.empty() : {_t(m, n)}\n"
                + _elementwise("%y", [("%X", _t(m, n))], ["#map_2d"], body, _t(m, n), "%v")
                + f"  return %y : {_t(m, n)}\n}}\n")
    return build


def _softmax_mlir(shape):
    m, n = shape
    return (f"#map_2d = affine_map<(i, j) -> (i, j)>\n#map_row = affine_map<(i, j) -> (i)>\n"
            f"func.func @softmax(%X: {_t(m, n)}) -> {_t(m, n)} {{\n"
            f"  %neg_inf = arith.constant 0xFF800000 : f32\n  %zero = arith.constant 0.0 : f32\n"
            f"  %empty_row = tensor.empty() : {_t(m)}\n  %empty = tensor.empty() : {_t(m, n)}\n"
            + _row_reduce("%max", "%X", shape, "%neg_inf", "arith.maximumf", "max")
            + _elementwise("%e", [("%X", _t(m, n)), ("%max", _t(m))], ["#map_2d", "#map_row"],
                           "    %d = arith.subf %a0, %a1 : f32\n    %v = math.exp %d : f32", _t(m, n), "%v")
            + _row_reduce("%sum", "%e", shape, "%zero", "arith.addf", "sum")
            + _elementwise("%y", [("%e", _t(m, n)), ("%sum", _t(m))], ["#map_2d", "#map_row"],
                           "    %v = arith.divf %a0, %a1 : f32", _t(m, n), "%v")
            + f"  return %y : {_t(m, n)}\n}}\n")


def _layernorm(name, affine):
    """Layernorm over rows: mean, centred values, variance, normalise; with ``affine``, times gamma plus beta."""
    def build(shape):
        m, n = shape
        params = f", %gamma: {_t(n)}, %beta: {_t(n)}" if affine else ""
        inputs = [("%c", _t(m, n)), ("%ss", _t(m))] + ([("%gamma", _t(n)), ("%beta", _t(n))] if affine else [])
        maps = ["#map_2d", "#map_row"] + (["#map_col", "#map_col"] if affine else [])
        scale = ("    %r = math.rsqrt %ve : f32\n    %n = arith.mulf %a0, %r : f32\n"
                 "    %g = arith.mulf %n, %a2 : f32\n    %v = arith.addf %g, %a3 : f32") if affine else (
                 "    %r = math.rsqrt %ve : f32\n    %v = arith.mulf %a0, %r : f32")
        return (f"#map_2d = affine_map<(i, j) -> (i, j)>\n#map_row = affine_map<(i, j) -> (i)>\n"
                + (f"#map_col = affine_map<(i, j) -> (j)>\n" if affine else "")
                + f"func.func @{name}(%X: {_t(m, n)}{params}) -> {_t(m, n)} {{\n"
                f"  %zero = arith.constant 0.0 : f32\n  %empty_row = tensor.empty() : {_t(m)}\n"
                f"  %empty = tensor.empty() : {_t(m, n)}\n"
                + _row_reduce("%sum", "%X", shape, "%zero", "arith.addf", "sum")
                + _elementwise("%c", [("%X", _t(m, n)), ("%sum", _t(m))], ["#map_2d", "#map_row"],
                               f"    %count = arith.constant {float(n)} : f32\n    %mean = arith.divf %a1, %count : f32\n"
                               "    %v = arith.subf %a0, %mean : f32", _t(m, n), "%v")
                + _elementwise("%sq", [("%c", _t(m, n))], ["#map_2d"], "    %v = arith.mulf %a0, %a0 : f32", _t(m, n),
                               "%v")
                + _row_reduce("%ss", "%sq", shape, "%zero", "arith.addf", "ss")
                + _elementwise("%y", inputs, maps,
                               f"    %count = arith.constant {float(n)} : f32\n    %eps = arith.constant 1.0e-05 : f32\n"
                               "    %var = arith.divf %a1, %count : f32\n    %ve = arith.addf %var, %eps : f32\n"
                               + scale, _t(m, n), "%v")
                + f"  return %y : {_t(m, n)}\n}}\n")
    return build


_layernorm_mlir = _layernorm("layernorm", affine=True)
_layernorm_plain_mlir = _layernorm("layernorm_plain", affine=False)


def _rms_norm_mlir(shape):
    """y = x / sqrt(mean(x^2) + eps) * g."""
    m, n = shape
    return (f"#map_2d = affine_map<(i, j) -> (i, j)>\n#map_row = affine_map<(i, j) -> (i)>\n"
            f"#map_col = affine_map<(i, j) -> (j)>\n"
            f"func.func @rms_norm(%X: {_t(m, n)}, %gamma: {_t(n)}) -> {_t(m, n)} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n  %empty_row = tensor.empty() : {_t(m)}\n"
            f"  %empty = tensor.empty() : {_t(m, n)}\n"
            + _elementwise("%sq", [("%X", _t(m, n))], ["#map_2d"], "    %v = arith.mulf %a0, %a0 : f32", _t(m, n), "%v")
            + _row_reduce("%ss", "%sq", shape, "%zero", "arith.addf", "ss")
            + _elementwise("%y", [("%X", _t(m, n)), ("%ss", _t(m)), ("%gamma", _t(n))],
                           ["#map_2d", "#map_row", "#map_col"],
                           f"    %count = arith.constant {float(n)} : f32\n    %eps = arith.constant 1.0e-05 : f32\n"
                           "    %ms = arith.divf %a1, %count : f32\n    %me = arith.addf %ms, %eps : f32\n"
                           "    %r = math.rsqrt %me : f32\n    %s = arith.mulf %a0, %r : f32\n"
                           "    %v = arith.mulf %s, %a2 : f32", _t(m, n), "%v")
            + f"  return %y : {_t(m, n)}\n}}\n")


def _row_sum_mlir(shape):
    m, n = shape
    return (f"#map_2d = affine_map<(i, j) -> (i, j)>\n#map_row = affine_map<(i, j) -> (i)>\n"
            f"func.func @row_sum(%X: {_t(m, n)}) -> {_t(m)} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n  %empty_row = tensor.empty() : {_t(m)}\n"
            + _row_reduce("%s", "%X", shape, "%zero", "arith.addf", "sum")
            + f"  return %s : {_t(m)}\n}}\n")


def _conv_mlir(shape, dtype="f32", name="conv2d_nhwc"):
    """An NHWC/HWCF convolution; with ``dtype`` bf16 (f16), its operands in it, an fp32 accumulator rounded to it."""
    n, h, w, c, kh, kw, f = shape
    oh, ow = h - kh + 1, w - kw + 1
    ty = lambda *d: _t(*d, dtype=dtype)  # noqa: E731
    res = "%r" if dtype == "f32" else "%acc"  # (%r is the rounding's in _to_bf16)
    text = ("#map_id = affine_map<(a, b, c, d) -> (a, b, c, d)>\n" if dtype != "f32" else "") + (
            f"func.func @{name}(%I: {ty(n, h, w, c)}, %K: {ty(kh, kw, c, f)}) -> {ty(n, oh, ow, f)} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n  %empty = tensor.empty() : {_t(n, oh, ow, f)}\n"
            f"  %init = linalg.fill ins(%zero : f32) outs(%empty : {_t(n, oh, ow, f)}) -> {_t(n, oh, ow, f)}\n"
            f"  {res} = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}\n"
            f"      ins(%I, %K : {ty(n, h, w, c)}, {ty(kh, kw, c, f)}) outs(%init : {_t(n, oh, ow, f)}) -> {_t(n, oh, ow, f)}\n")
    if dtype == "f32":
        return text + f"  return %r : {_t(n, oh, ow, f)}\n}}\n"
    return text + _to_bf16(res, (n, oh, ow, f), dtype)


# --- bf16 variants of the matmul-bound tasks: bf16 operands, fp32 accumulation, a bf16 result ----------------

def _to_bf16(source, dims, dtype="bf16"):
    """A linalg.generic rounding an fp32 tensor to bf16 (or ``dtype``: f16), the task's output precision."""
    maps = ", ".join(["#map_id"] * 2)
    iterators = ", ".join(['"parallel"'] * len(dims))
    return (f"  %out_bf16 = tensor.empty() : {_t(*dims, dtype=dtype)}\n"
            f"  %y = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}]}}\n"
            f"      ins({source} : {_t(*dims)}) outs(%out_bf16 : {_t(*dims, dtype=dtype)}) {{\n"
            f"  ^bb0(%x: f32, %o: {dtype}):\n    %r = arith.truncf %x : f32 to {dtype}\n    linalg.yield %r : {dtype}\n"
            f"  }} -> {_t(*dims, dtype=dtype)}\n  return %y : {_t(*dims, dtype=dtype)}\n}}\n")


def _matmul_bf16_mlir(name, dtype="bf16"):
    def build(shape):
        m, n, k = shape
        return (f"#map_id = affine_map<(i, j) -> (i, j)>\n"
                f"func.func @{name}(%A: {_t(m, k, dtype=dtype)}, %B: {_t(k, n, dtype=dtype)}) -> "
                f"{_t(m, n, dtype=dtype)} {{\n"
                + _accumulate("linalg.matmul", _t(m, k, dtype=dtype), _t(k, n, dtype=dtype), (m, n))
                + _to_bf16("%mm", (m, n), dtype))
    return build


def _linear_mlir(name, dtype="f32"):
    """nn.Linear without a bias as importers write it: x (M x K) times the weight W (N x K) transposed, fp32
    accumulation; with dtype bf16, bf16 operands and a bf16 result."""
    def build(shape):
        m, n, k = shape
        ty = lambda *d: _t(*d, dtype=dtype)  # noqa: E731
        body = (f"func.func @{name}(%A: {ty(m, k)}, %W: {ty(n, k)}) -> {ty(m, n)} {{\n"
                f"  %wt_empty = tensor.empty() : {ty(k, n)}\n"
                f"  %B = linalg.transpose ins(%W : {ty(n, k)}) outs(%wt_empty : {ty(k, n)}) permutation = [1, 0]\n"
                + _accumulate("linalg.matmul", ty(m, k), ty(k, n), (m, n)))
        if dtype == "f32":
            return body + f"  return %mm : {_t(m, n)}\n}}\n"
        return "#map_id = affine_map<(i, j) -> (i, j)>\n" + body + _to_bf16("%mm", (m, n), dtype)
    return build


def _batch_matmul_bf16_mlir(shape):
    b, m, n, k = shape
    return (f"#map_id = affine_map<(b, i, j) -> (b, i, j)>\n"
            f"func.func @batch_matmul_bf16(%A: {_t(b, m, k, dtype='bf16')}, %B: {_t(b, k, n, dtype='bf16')}) -> "
            f"{_t(b, m, n, dtype='bf16')} {{\n"
            + _accumulate("linalg.batch_matmul", _t(b, m, k, dtype='bf16'), _t(b, k, n, dtype='bf16'), (b, m, n))
            + _to_bf16("%mm", (b, m, n)))


def _gemm_bias_relu_bf16_mlir(shape):
    m, n, k = shape
    bf = lambda *d: _t(*d, dtype="bf16")  # noqa: E731
    return (f"#map_id = affine_map<(i, j) -> (i, j)>\n#map_col = affine_map<(i, j) -> (j)>\n"
            f"func.func @gemm_bias_relu_bf16(%A: {bf(m, k)}, %B: {bf(k, n)}, %bias: {bf(n)}) -> {bf(m, n)} {{\n"
            + _accumulate("linalg.matmul", bf(m, k), bf(k, n), (m, n))
            + f"  %out_bf16 = tensor.empty() : {bf(m, n)}\n"
            f"  %y = linalg.generic {{indexing_maps = [#map_id, #map_col, #map_id], iterator_types = [\"parallel\", \"parallel\"]}}\n"
            f"      ins(%mm, %bias : {_t(m, n)}, {bf(n)}) outs(%out_bf16 : {bf(m, n)}) {{\n"
            f"  ^bb0(%x: f32, %b: bf16, %o: bf16):\n    %bf = arith.extf %b : bf16 to f32\n"
            f"    %s = arith.addf %x, %bf : f32\n    %r = arith.maximumf %s, %zero : f32\n"
            f"    %t = arith.truncf %r : f32 to bf16\n    linalg.yield %t : bf16\n  }} -> {bf(m, n)}\n"
            f"  return %y : {bf(m, n)}\n}}\n")


# --- Level 2: a gemm and an elementwise epilogue (plus the gemm+softmax and gemm+sum reductions) ----------

def _gemm_epilogue_mlir(name, extra, body):
    """``extra``: (name, kind) with kind "col" (one value per output column) or "full" (an MxN tensor)."""
    def build(shape):
        m, n, k = shape
        args = [(a, _t(n) if kind == "col" else _t(m, n)) for a, kind in extra]
        inputs = [("%mm", _t(m, n))] + [(f"%{a}", t) for a, t in args]
        maps = ["#map_2d"] + ["#map_col" if kind == "col" else "#map_2d" for _, kind in extra]
        return (_gemm_prologue(name, m, n, k, args)
                + _elementwise("%y", inputs, maps, body, _t(m, n), "%v")
                + f"  return %y : {_t(m, n)}\n}}\n")
    return build


def _gemm_softmax_mlir(shape):
    m, n, k = shape
    return (_gemm_prologue("gemm_softmax", m, n, k)
            + f"  %neg_inf = arith.constant 0xFF800000 : f32\n  %empty_row = tensor.empty() : {_t(m)}\n"
            + _row_reduce("%max", "%mm", (m, n), "%neg_inf", "arith.maximumf", "max")
            + _elementwise("%e", [("%mm", _t(m, n)), ("%max", _t(m))], ["#map_2d", "#map_row"],
                           "    %d = arith.subf %a0, %a1 : f32\n    %v = math.exp %d : f32", _t(m, n), "%v")
            + _row_reduce("%sum", "%e", (m, n), "%zero", "arith.addf", "sum")
            + _elementwise("%y", [("%e", _t(m, n)), ("%sum", _t(m))], ["#map_2d", "#map_row"],
                           "    %v = arith.divf %a0, %a1 : f32", _t(m, n), "%v")
            + f"  return %y : {_t(m, n)}\n}}\n")


def _gemm_sigmoid_sum_mlir(shape):
    m, n, k = shape
    return (_gemm_prologue("gemm_sigmoid_sum", m, n, k, result=_t(m))
            + f"  %empty_row = tensor.empty() : {_t(m)}\n"
            + _elementwise("%s", [("%mm", _t(m, n))], ["#map_2d"],
                           "    %one = arith.constant 1.0 : f32\n    %neg = arith.negf %a0 : f32\n"
                           "    %e = math.exp %neg : f32\n    %d = arith.addf %one, %e : f32\n"
                           "    %v = arith.divf %one, %d : f32", _t(m, n), "%v")
            + _row_reduce("%r", "%s", (m, n), "%zero", "arith.addf", "sum")
            + f"  return %r : {_t(m)}\n}}\n")


def _conv_out(size, k, stride, pad, dilation):
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def _conv_nchw_mlir(name, depthwise=False, dtype="f32"):
    """A convolution as torch-mlir writes nn.Conv2d without bias: the input zero-padded by tensor.pad, then
    linalg.conv_2d_nchw_fchw (or, ``depthwise``, linalg.depthwise_conv_2d_nchw_chw: one filter per channel, the
    C x KH x KW filter of groups=C) into a zero fill. Shape (n, c, h, w, f, kh, kw, stride, pad, dilation). With
    ``dtype`` bf16 (f16): its input and filter in it, an fp32 accumulator rounded to it (torch-mlir's form)."""
    def mlir(shape):
        n, c, h, w, f, kh, kw, stride, pad, dilation = shape
        oh, ow = _conv_out(h, kh, stride, pad, dilation), _conv_out(w, kw, stride, pad, dilation)
        ty = lambda *d: _t(*d, dtype=dtype)  # noqa: E731
        res = "%r" if dtype == "f32" else "%acc"  # (%r is the rounding's in _to_bf16)
        dims = (n, c if depthwise else f, oh, ow)
        out = _t(*dims)
        filt = ty(c, kh, kw) if depthwise else ty(f, c, kh, kw)
        padded = ty(n, c, h + 2 * pad, w + 2 * pad)
        text = ("#map_id = affine_map<(a, b, c, d) -> (a, b, c, d)>\n" if dtype != "f32" else "") + (
            f"func.func @{name}(%X: {ty(n, c, h, w)}, %W: {filt}) -> {ty(*dims)} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n")
        pad_value = "%zero"
        if dtype != "f32":
            text += f"  %pad_value = arith.constant 0.0 : {dtype}\n"
            pad_value = "%pad_value"
        source = "%X"
        if pad:
            text += (f"  %padded = tensor.pad %X low[0, 0, {pad}, {pad}] high[0, 0, {pad}, {pad}] {{\n"
                     f"  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n    tensor.yield {pad_value} : {dtype}\n"
                     f"  }} : {ty(n, c, h, w)} to {padded}\n")
            source = "%padded"
        op = "linalg.depthwise_conv_2d_nchw_chw" if depthwise else "linalg.conv_2d_nchw_fchw"
        text += (f"  %empty = tensor.empty() : {out}\n"
                 f"  %init = linalg.fill ins(%zero : f32) outs(%empty : {out}) -> {out}\n"
                 f"  {res} = {op} {{dilations = dense<{dilation}> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}\n"
                 f"      ins({source}, %W : {padded if pad else ty(n, c, h, w)}, {filt}) outs(%init : {out}) -> {out}\n")
        if dtype == "f32":
            return text + f"  return %r : {out}\n}}\n"
        return text + _to_bf16(res, dims, dtype)
    return mlir


def _np_conv2d_nchw(stride, pad, dilation, depthwise=False):
    def conv(x, w):
        n, c, h, wd = x.shape
        kh, kw = w.shape[-2], w.shape[-1]
        oh, ow = _conv_out(h, kh, stride, pad, dilation), _conv_out(wd, kw, stride, pad, dilation)
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        out = np.zeros((n, c if depthwise else w.shape[0], oh, ow))
        for a in range(kh):
            for b in range(kw):
                patch = xp[:, :, a * dilation:a * dilation + stride * (oh - 1) + 1:stride,
                           b * dilation:b * dilation + stride * (ow - 1) + 1:stride]
                if depthwise:
                    out += patch * w[:, a, b][None, :, None, None]
                else:
                    out += np.einsum("nchw,fc->nfhw", patch, w[:, :, a, b])
        return out
    return conv


def _conv_nchw_task(name, shape, small, note, depthwise=False):
    """An NCHW convolution task (PyTorch's layout; fp32 without TF32 on every side). ``depthwise``: groups = C, one
    C x KH x KW filter (the shape's f is C)."""
    stride, pad, dilation = shape[7], shape[8], shape[9]
    assert small[7:] == shape[7:], name

    def flops(s):
        n, c, h, w, f, kh, kw, st, p, d = s
        return 2 * n * (1 if depthwise else c) * f * _conv_out(h, kh, st, p, d) * _conv_out(w, kw, st, p, d) * kh * kw
    torch_filter, groups = ("w.unsqueeze(1)", ", groups=x.shape[1]") if depthwise else ("w", "")
    filter_shape = (lambda s: (s[1], s[5], s[6])) if depthwise else (lambda s: (s[4], s[1], s[5], s[6]))
    return Task(name, 1, shape, small, _conv_nchw_mlir(name, depthwise), _np_conv2d_nchw(stride, pad, dilation, depthwise),
                f"lambda x, w: torch.nn.functional.conv2d(x, {torch_filter}, stride={stride}, padding={pad}, "
                f"dilation={dilation}{groups})",
                lambda s: [(s[0], s[1], s[2], s[3]), filter_shape(s)], flops, note=note)


def _gelu(x, y="%v"):
    return _GELU_BODY.format(x=x, y=y)


def _np_gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _np_conv2d_nhwc(i, k):
    kh, kw = k.shape[0], k.shape[1]
    oh, ow = i.shape[1] - kh + 1, i.shape[2] - kw + 1
    out = np.zeros((i.shape[0], oh, ow, k.shape[3]))
    for a in range(kh):
        for b in range(kw):
            out += i[:, a:a + oh, b:b + ow, :] @ k[a, b]
    return out


def _np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class Task:
    """``dtype``: the precision of the task's inputs and output ("f32", or "bf16": bf16 operands and result,
    fp32 accumulation, as PyTorch's bf16 matmul); ``fp32_twin``: for a bf16 task, the fp32 task computing the
    same thing (CI checks the bf16 payload against it); ``precision``: "ieee", or "tf32" for an fp32 task whose
    matmuls everyone may compute in TF32 (kforge-tune --allow-tf32; PyTorch with allow_tf32), judged at TF32's
    tolerance."""

    def __init__(self, name, level, shape, small, mlir, numpy, torch, inputs, flops, note="", dtype="f32",
                 fp32_twin=None, softmax_rows=False, precision="ieee"):
        self.name, self.level, self.shape, self.small = name, level, shape, small
        self.mlir, self.numpy, self.torch, self.inputs, self.flops, self.note = mlir, numpy, torch, inputs, flops, note
        self.dtype, self.fp32_twin, self.precision = dtype, fp32_twin, precision
        # A row softmax of its input: the harness also checks that rows sum to 1 and that inputs large enough
        # to overflow exp without the row max subtracted (x 1000) give no NaN/Inf.
        self.softmax_rows = softmax_rows

    @property
    def tolerance(self):
        """Relative L2 error allowed against a float64 reference, kforge-run's defaults (runtime/runner/DType.cpp):
        fp32 1e-4 (summation order); f16 and bf16 one unit roundoff of the output (2^-11, 2^-8), which passes
        output rounding and rejects fp16 accumulation and a dropped K tile; TF32 allowed: 2^-9 (kforge-run
        --precision tf32: passes TF32's truncated operands, ~7.7e-4, rejects a dropped K tile)."""
        if self.precision == "tf32":
            return 2.0 ** -9
        return {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}.get(self.dtype, 1e-4)

    def input_shapes(self, shape):
        return self.inputs(shape)


def _mm_inputs(s):
    return [(s[0], s[2]), (s[2], s[1])]


def _mm_flops(s):
    return 2 * s[0] * s[1] * s[2]


TASKS = [
    # Level 1
    Task("matmul_square", 1, (4096, 4096, 4096), (64, 64, 64), _matmul_mlir("matmul_square"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    Task("matmul_rect", 1, (8192, 2048, 4096), (128, 32, 64), _matmul_mlir("matmul_rect"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    # The other square sizes issue 8 measures SGEMM at.
    Task("matmul_2048", 1, (2048, 2048, 2048), (32, 32, 32), _matmul_mlir("matmul_2048"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    Task("matmul_8192", 1, (8192, 8192, 8192), (64, 64, 32), _matmul_mlir("matmul_8192"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    Task("matmul_large_k", 1, (1024, 1024, 32768), (32, 32, 512), _matmul_mlir("matmul_large_k"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    Task("matmul_small_k", 1, (8192, 8192, 64), (128, 128, 16), _matmul_mlir("matmul_small_k"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    Task("matmul_irregular", 1, (2000, 3000, 1000), (40, 60, 20), _matmul_mlir("matmul_irregular"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    # Prime M, N and K (issue 27: partial tiles at every loop's end), one above 8000 in every dimension.
    Task("matmul_prime", 1, (4093, 4099, 4091), (37, 61, 29), _matmul_mlir("matmul_prime"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    Task("matmul_prime_8k", 1, (8191, 8209, 8219), (31, 67, 41), _matmul_mlir("matmul_prime_8k"),
         lambda a, b: a @ b, "lambda a, b: a @ b", _mm_inputs, _mm_flops),
    # nn.Linear (x W^T) with prime M and N (tokens, output features) and a K that 64 does not divide (4104 =
    # 8 x 513: the bf16 twin's tensor-core copies take 16-byte rows, so K is a multiple of 8).
    Task("linear_prime", 1, (4093, 4099, 4104), (37, 61, 40), _linear_mlir("linear_prime"),
         lambda a, w: a @ w.T, "lambda a, w: a @ w.T", lambda s: [(s[0], s[2]), (s[1], s[2])], _mm_flops,
         note="nn.Linear without a bias: x W^T"),
    Task("batch_matmul", 1, (16, 1024, 1024, 1024), (2, 32, 32, 32), _batch_matmul_mlir,
         lambda a, b: a @ b, "lambda a, b: torch.bmm(a, b)",
         lambda s: [(s[0], s[1], s[3]), (s[0], s[3], s[2])], lambda s: 2 * s[0] * s[1] * s[2] * s[3]),
    Task("matvec", 1, (16384, 16384), (64, 128), _matvec_mlir,
         lambda a, x: a @ x, "lambda a, x: torch.mv(a, x)", lambda s: [(s[0], s[1]), (s[1],)],
         lambda s: 2 * s[0] * s[1]),
    Task("relu", 1, (8192, 8192), (64, 128), _unary_mlir("relu", "    %v = arith.maximumf %a0, %zero : f32"),
         lambda x: np.maximum(x, 0), "lambda x: torch.relu(x)", lambda s: [s], lambda s: 0),
    Task("gelu", 1, (8192, 8192), (64, 128), _unary_mlir("gelu", _gelu("%a0")),
         _np_gelu, "lambda x: torch.nn.functional.gelu(x, approximate='tanh')", lambda s: [s],
         lambda s: 0, note="GELU, tanh approximation"),
    Task("softmax", 1, (4096, 4096), (32, 64), _softmax_mlir, _np_softmax, "lambda x: torch.softmax(x, dim=1)",
         lambda s: [s], lambda s: 0, softmax_rows=True),
    Task("softmax_wide", 1, (1024, 32000), (8, 512), _softmax_mlir, _np_softmax,
         "lambda x: torch.softmax(x, dim=1)", lambda s: [s], lambda s: 0, softmax_rows=True),
    # A GPT-2 vocabulary's logits: rows no warp multiple or 16-byte vector divides (issue 27).
    Task("softmax_vocab", 1, (1024, 50257), (8, 1003), _softmax_mlir, _np_softmax,
         "lambda x: torch.softmax(x, dim=1)", lambda s: [s], lambda s: 0, softmax_rows=True),
    Task("layernorm", 1, (8192, 4096), (32, 64), _layernorm_mlir,
         lambda x, g, b: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b,
         "lambda x, g, b: torch.nn.functional.layer_norm(x, x.shape[1:], g, b, eps=1e-5)",
         lambda s: [s, (s[1],), (s[1],)], lambda s: 0),
    Task("row_sum", 1, (8192, 8192), (64, 128), _row_sum_mlir, lambda x: x.sum(1), "lambda x: x.sum(dim=1)",
         lambda s: [s], lambda s: 0),
    Task("layernorm_plain", 1, (8192, 4096), (32, 64), _layernorm_plain_mlir,
         lambda x: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
         "lambda x: torch.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5)", lambda s: [s], lambda s: 0,
         note="layernorm without gamma and beta"),
    Task("rms_norm", 1, (8192, 4096), (32, 64), _rms_norm_mlir,
         lambda x, g: x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-5) * g,
         "lambda x, g: x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-5) * g",
         lambda s: [s, (s[1],)], lambda s: 0),
    Task("conv2d_nhwc", 1, (16, 64, 64, 64, 3, 3, 128), (1, 10, 10, 4, 3, 3, 8), _conv_mlir,
         _np_conv2d_nhwc,
         "lambda i, k: torch.nn.functional.conv2d(i.permute(0, 3, 1, 2), k.permute(3, 2, 0, 1)).permute(0, 2, 3, 1)",
         lambda s: [(s[0], s[1], s[2], s[3]), (s[4], s[5], s[3], s[6])],
         lambda s: 2 * s[0] * (s[1] - s[4] + 1) * (s[2] - s[5] + 1) * s[6] * s[4] * s[5] * s[3]),
    # Convolutions in PyTorch's layout (NCHW, padded as nn.Conv2d pads), ResNet / UNet-like sizes. Shape:
    # (n, c, h, w, f, kh, kw, stride, pad, dilation).
    _conv_nchw_task("conv_resnet_3x3", (32, 64, 56, 56, 64, 3, 3, 1, 1, 1), (2, 4, 6, 6, 8, 3, 3, 1, 1, 1),
                    "NCHW 3x3 convolution, padding 1 (a ResNet stage-1 layer)"),
    _conv_nchw_task("conv_resnet_3x3_s2", (32, 128, 56, 56, 256, 3, 3, 2, 1, 1), (2, 4, 9, 9, 8, 3, 3, 2, 1, 1),
                    "NCHW 3x3 convolution, stride 2, padding 1 (a ResNet downsampling layer)"),
    _conv_nchw_task("conv_stem_7x7_s2", (32, 3, 224, 224, 64, 7, 7, 2, 3, 1), (2, 3, 15, 15, 8, 7, 7, 2, 3, 1),
                    "NCHW 7x7 convolution of 3 channels, stride 2, padding 3 (a ResNet stem)"),
    _conv_nchw_task("conv_5x5", (16, 32, 64, 64, 64, 5, 5, 1, 2, 1), (2, 3, 8, 8, 8, 5, 5, 1, 2, 1),
                    "NCHW 5x5 convolution, padding 2"),
    _conv_nchw_task("conv_dilated_3x3", (16, 64, 64, 64, 64, 3, 3, 1, 2, 2), (2, 4, 9, 9, 8, 3, 3, 1, 2, 2),
                    "NCHW 3x3 convolution, dilation 2, padding 2"),
    _conv_nchw_task("conv_unet_3x3", (8, 128, 128, 128, 128, 3, 3, 1, 1, 1), (2, 4, 6, 6, 8, 3, 3, 1, 1, 1),
                    "NCHW 3x3 convolution, padding 1 (a UNet block)"),
    _conv_nchw_task("conv_pointwise", (32, 256, 56, 56, 64, 1, 1, 1, 0, 1), (2, 8, 5, 5, 8, 1, 1, 1, 0, 1),
                    "NCHW 1x1 convolution (a ResNet bottleneck's reduction)"),
    _conv_nchw_task("conv_depthwise_3x3", (32, 128, 56, 56, 128, 3, 3, 1, 1, 1), (2, 4, 6, 6, 4, 3, 3, 1, 1, 1),
                    "NCHW depthwise 3x3 convolution, padding 1 (MobileNet)", depthwise=True),
    # Level 2
    Task("gemm_bias_relu", 2, (4096, 4096, 4096), (64, 64, 64),
         _gemm_epilogue_mlir("gemm_bias_relu", [("bias", "col")],
                             "    %s = arith.addf %a0, %a1 : f32\n    %v = arith.maximumf %s, %zero : f32"),
         lambda a, b, bias: np.maximum(a @ b + bias, 0), "lambda a, b, bias: torch.relu(a @ b + bias)",
         lambda s: _mm_inputs(s) + [(s[1],)], _mm_flops),
    Task("gemm_scale_gelu", 2, (4096, 4096, 4096), (64, 64, 64),
         _gemm_epilogue_mlir("gemm_scale_gelu", [], "    %scale = arith.constant 0.5 : f32\n"
                             "    %x = arith.mulf %a0, %scale : f32\n" + _gelu("%x")),
         lambda a, b: _np_gelu(0.5 * (a @ b)),
         "lambda a, b: torch.nn.functional.gelu((a @ b) * 0.5, approximate='tanh')", _mm_inputs, _mm_flops),
    Task("gemm_bias_residual", 2, (4096, 4096, 4096), (64, 64, 64),
         _gemm_epilogue_mlir("gemm_bias_residual", [("bias", "col"), ("residual", "full")],
                             "    %s = arith.addf %a0, %a1 : f32\n    %v = arith.addf %s, %a2 : f32"),
         lambda a, b, bias, r: a @ b + bias + r, "lambda a, b, bias, r: a @ b + bias + r",
         lambda s: _mm_inputs(s) + [(s[1],), (s[0], s[1])], _mm_flops),
    Task("gemm_softmax", 2, (4096, 4096, 4096), (64, 64, 64), _gemm_softmax_mlir,
         lambda a, b: _np_softmax(a @ b), "lambda a, b: torch.softmax(a @ b, dim=1)", _mm_inputs, _mm_flops),
    Task("bias_gelu_multiply", 2, (4096, 4096, 4096), (64, 64, 64),
         _gemm_epilogue_mlir("bias_gelu_multiply", [("bias", "col"), ("m", "full")],
                             "    %x = arith.addf %a0, %a1 : f32\n" + _gelu("%x", "%g") + "\n    %v = arith.mulf %g, %a2 : f32"),
         lambda a, b, bias, mul: _np_gelu(a @ b + bias) * mul,
         "lambda a, b, bias, m: torch.nn.functional.gelu(a @ b + bias, approximate='tanh') * m",
         lambda s: _mm_inputs(s) + [(s[1],), (s[0], s[1])], _mm_flops, note="the gemm, then bias, GELU, multiply"),
    Task("matmul_subtract_multiply_relu", 2, (4096, 4096, 4096), (64, 64, 64),
         _gemm_epilogue_mlir("matmul_subtract_multiply_relu", [],
                             "    %s = arith.constant 0.25 : f32\n    %m = arith.constant 1.5 : f32\n"
                             "    %d = arith.subf %a0, %s : f32\n    %p = arith.mulf %d, %m : f32\n"
                             "    %v = arith.maximumf %p, %zero : f32"),
         lambda a, b: np.maximum((a @ b - 0.25) * 1.5, 0), "lambda a, b: torch.relu((a @ b - 0.25) * 1.5)",
         _mm_inputs, _mm_flops),
    Task("gemm_sigmoid_sum", 2, (4096, 4096, 4096), (64, 64, 64), _gemm_sigmoid_sum_mlir,
         lambda a, b: (1 / (1 + np.exp(-(a @ b)))).sum(1), "lambda a, b: torch.sigmoid(a @ b).sum(dim=1)",
         _mm_inputs, _mm_flops),
    Task("gemm_divide_gelu", 2, (4096, 4096, 4096), (64, 64, 64),
         _gemm_epilogue_mlir("gemm_divide_gelu", [], "    %dv = arith.constant 2.0 : f32\n"
                             "    %x = arith.divf %a0, %dv : f32\n" + _gelu("%x")),
         lambda a, b: _np_gelu((a @ b) / 2.0),
         "lambda a, b: torch.nn.functional.gelu((a @ b) / 2.0, approximate='tanh')", _mm_inputs, _mm_flops),
]


def _f16_twin(name, mlir):
    """The f16 variant of the fp32 task ``name``: same shapes, definitions and FLOPs."""
    fp32 = by_name(name)
    return Task(name + "_f16", fp32.level, fp32.shape, fp32.small, mlir, fp32.numpy, fp32.torch, fp32.inputs,
                fp32.flops, note="f16 operands and result, fp32 accumulation", dtype="f16", fp32_twin=name)


def _bf16_twin(name, mlir):
    """The bf16 variant of the fp32 task ``name``: same shapes, definitions and FLOPs."""
    fp32 = by_name(name)
    return Task(name + "_bf16", fp32.level, fp32.shape, fp32.small, mlir, fp32.numpy, fp32.torch, fp32.inputs,
                fp32.flops, note="bf16 operands and result, fp32 accumulation", dtype="bf16", fp32_twin=name)


def _tf32_twin(name, mlir, suffix="_tf32"):
    """The fp32 task ``name`` with TF32 allowed to kforge and to PyTorch alike (issue 34's opt-in)."""
    fp32 = by_name(name)
    return Task(name + suffix, fp32.level, fp32.shape, fp32.small, mlir, fp32.numpy, fp32.torch, fp32.inputs,
                fp32.flops, note=(fp32.note + "; " if fp32.note else "") + "TF32 allowed (kforge --allow-tf32, "
                "torch allow_tf32)", precision="tf32")


def by_name(name):
    for task in TASKS:
        if task.name == name:
            return task
    raise KeyError(name)


TASKS += [
    _bf16_twin("matmul_square", _matmul_bf16_mlir("matmul_square_bf16")),
    _bf16_twin("matmul_rect", _matmul_bf16_mlir("matmul_rect_bf16")),
    _bf16_twin("matmul_large_k", _matmul_bf16_mlir("matmul_large_k_bf16")),
    _bf16_twin("matmul_small_k", _matmul_bf16_mlir("matmul_small_k_bf16")),
    _bf16_twin("matmul_irregular", _matmul_bf16_mlir("matmul_irregular_bf16")),
    _bf16_twin("batch_matmul", _batch_matmul_bf16_mlir),
    _bf16_twin("gemm_bias_relu", _gemm_bias_relu_bf16_mlir),
    _f16_twin("matmul_square", _matmul_bf16_mlir("matmul_square_f16", dtype="f16")),
    _bf16_twin("matmul_8192", _matmul_bf16_mlir("matmul_8192_bf16")),
    _f16_twin("matmul_8192", _matmul_bf16_mlir("matmul_8192_f16", dtype="f16")),
    _bf16_twin("linear_prime", _linear_mlir("linear_prime_bf16", dtype="bf16")),
    # bf16 convolutions (fp32 accumulation, a bf16 result; cuDNN on bf16 tensors beside them): NHWC, whose
    # channels are contiguous along K, and NCHW as torch-mlir writes it.
    _bf16_twin("conv2d_nhwc", lambda s: _conv_mlir(s, "bf16", "conv2d_nhwc_bf16")),
    _bf16_twin("conv_resnet_3x3", _conv_nchw_mlir("conv_resnet_3x3_bf16", dtype="bf16")),
    _bf16_twin("conv_unet_3x3", _conv_nchw_mlir("conv_unet_3x3_bf16", dtype="bf16")),
    _bf16_twin("conv_resnet_3x3_s2", _conv_nchw_mlir("conv_resnet_3x3_s2_bf16", dtype="bf16")),
    _bf16_twin("conv_pointwise", _conv_nchw_mlir("conv_pointwise_bf16", dtype="bf16")),
    Task("linear_square", 1, (4096, 4096, 4096), (32, 48, 64), _linear_mlir("linear_square"),
         lambda a, w: a @ w.T, "lambda a, w: a @ w.T", lambda s: [(s[0], s[2]), (s[1], s[2])], _mm_flops,
         note="nn.Linear without a bias: x W^T"),
    Task("linear_8k", 1, (8192, 8192, 8192), (32, 48, 64), _linear_mlir("linear_8k"),
         lambda a, w: a @ w.T, "lambda a, w: a @ w.T", lambda s: [(s[0], s[2]), (s[1], s[2])], _mm_flops,
         note="nn.Linear without a bias: x W^T"),
]
TASKS += [
    _tf32_twin("linear_square", _linear_mlir("linear_square_tf32")),
    _tf32_twin("linear_8k", _linear_mlir("linear_8k_tf32")),
    _tf32_twin("linear_prime", _linear_mlir("linear_prime_tf32")),
    _tf32_twin("matmul_square", _matmul_mlir("matmul_square_tf32")),
    _tf32_twin("matmul_8192", _matmul_mlir("matmul_8192_tf32")),
    # NCHW convolutions with TF32 allowed (cuDNN's default for PyTorch's fp32 convolutions:
    # torch.backends.cudnn.allow_tf32): kforge's TF32 implicit GEMM on wgmma, on channels-last copies.
    _tf32_twin("conv_resnet_3x3", _conv_nchw_mlir("conv_resnet_3x3_tf32")),
    _tf32_twin("conv_unet_3x3", _conv_nchw_mlir("conv_unet_3x3_tf32")),
]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--write", metavar="DIR")
    parser.add_argument("--small", action="store_true", help="the small variants (CPU checks)")
    args = parser.parse_args(argv)
    if args.list:
        for t in TASKS:
            print(f"level {t.level}  {t.name:32} {t.dtype:5} {'x'.join(map(str, t.shape))}")
    if args.write:
        os.makedirs(args.write, exist_ok=True)
        for t in TASKS:
            with open(os.path.join(args.write, t.name + ".mlir"), "w") as f:
                f.write(t.mlir(t.small if args.small else t.shape))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
