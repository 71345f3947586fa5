#!/usr/bin/env python3
"""Writes the payloads of the transposed-operand and ragged-row check into DIR: nn.Linear as importers write it
(x @ W^T, the transpose a linalg.transpose that kforge-normalize-importer folds into the matmul's maps) in fp32
and bf16 (fp32 accumulation, bf16 result), an irregular fp32 Linear, attention's scores (Q @ K^T, batched), and
row kernels whose width no warp multiple divides (softmax 4095 and 50257 wide, layernorm and row sum 4095).

    python3 scripts/gpu/layout_shape_payloads.py DIR
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "tasks"))
import tasks  # noqa: E402  (bench/tasks' own builders for the row kernels)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import first_kernel_payloads  # noqa: E402  (its payload writer)


def linear(name, m, n, k, dtype):
    acc = "f32"
    body = f"""func.func @{name}(%x: tensor<{m}x{k}x{dtype}>, %w: tensor<{n}x{k}x{dtype}>) -> tensor<{m}x{n}x{dtype}> {{
  %e = tensor.empty() : tensor<{k}x{n}x{dtype}>
  %t = linalg.transpose ins(%w : tensor<{n}x{k}x{dtype}>) outs(%e : tensor<{k}x{n}x{dtype}>) permutation = [1, 0]
  %z = arith.constant 0.0 : {acc}
  %o = tensor.empty() : tensor<{m}x{n}x{acc}>
  %f = linalg.fill ins(%z : {acc}) outs(%o : tensor<{m}x{n}x{acc}>) -> tensor<{m}x{n}x{acc}>
  %r = linalg.matmul ins(%x, %t : tensor<{m}x{k}x{dtype}>, tensor<{k}x{n}x{dtype}>) outs(%f : tensor<{m}x{n}x{acc}>) -> tensor<{m}x{n}x{acc}>
"""
    if dtype == acc:
        return body + f"  return %r : tensor<{m}x{n}x{acc}>\n}}\n"
    return body + f"""  %ob = tensor.empty() : tensor<{m}x{n}x{dtype}>
  %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%r : tensor<{m}x{n}x{acc}>) outs(%ob : tensor<{m}x{n}x{dtype}>) {{
  ^bb0(%v: {acc}, %u: {dtype}):
    %tr = arith.truncf %v : {acc} to {dtype}
    linalg.yield %tr : {dtype}
  }} -> tensor<{m}x{n}x{dtype}>
  return %y : tensor<{m}x{n}x{dtype}>
}}
"""


def scores(batch, seq, head):
    return f"""func.func @scores(%q: tensor<{batch}x{seq}x{head}xf32>, %k: tensor<{batch}x{seq}x{head}xf32>) -> tensor<{batch}x{seq}x{seq}xf32> {{
  %e = tensor.empty() : tensor<{batch}x{head}x{seq}xf32>
  %t = linalg.transpose ins(%k : tensor<{batch}x{seq}x{head}xf32>) outs(%e : tensor<{batch}x{head}x{seq}xf32>) permutation = [0, 2, 1]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<{batch}x{seq}x{seq}xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<{batch}x{seq}x{seq}xf32>) -> tensor<{batch}x{seq}x{seq}xf32>
  %r = linalg.batch_matmul ins(%q, %t : tensor<{batch}x{seq}x{head}xf32>, tensor<{batch}x{head}x{seq}xf32>) outs(%f : tensor<{batch}x{seq}x{seq}xf32>) -> tensor<{batch}x{seq}x{seq}xf32>
  return %r : tensor<{batch}x{seq}x{seq}xf32>
}}
"""


def bias_relu(name, rows, cols, dtype):
    """relu(x + b) over rows x cols: an elementwise payload whose tiles need not divide it (issue 27's masked
    tiles); 16-byte accesses in full tiles, predicated scalar ones at the edges."""
    return f"""func.func @{name}(%x: tensor<{rows}x{cols}x{dtype}>, %b: tensor<{cols}x{dtype}>) -> tensor<{rows}x{cols}x{dtype}> {{
  %e = tensor.empty() : tensor<{rows}x{cols}x{dtype}>
  %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %b : tensor<{rows}x{cols}x{dtype}>, tensor<{cols}x{dtype}>) outs(%e : tensor<{rows}x{cols}x{dtype}>) {{
  ^bb0(%v: {dtype}, %c: {dtype}, %o: {dtype}):
    %z = arith.constant 0.0 : {dtype}
    %s = arith.addf %v, %c : {dtype}
    %r = arith.maximumf %s, %z : {dtype}
    linalg.yield %r : {dtype}
  }} -> tensor<{rows}x{cols}x{dtype}>
  return %y : tensor<{rows}x{cols}x{dtype}>
}}
"""


PAYLOADS = {
    "linear_f32_4096": linear("linear_f32", 4096, 4096, 4096, "f32"),
    "linear_bf16_4096": linear("linear_bf16", 4096, 4096, 4096, "bf16"),
    "linear_f32_2048x3000x1000": linear("linear_f32_irregular", 2048, 3000, 1000, "f32"),
    "scores_f32_32x1024x64": scores(32, 1024, 64),
    "softmax_4096x4095": tasks._softmax_mlir((4096, 4095)),
    "softmax_1024x50257": tasks._softmax_mlir((1024, 50257)),
    "layernorm_8192x4095": tasks._layernorm_mlir((8192, 4095)),
    "row_sum_8192x4095": tasks._row_sum_mlir((8192, 4095)),
    "bias_relu_f32_16381x1000": bias_relu("bias_relu_f32", 16381, 1000, "f32"),
    "bias_relu_f32_8191x6000": bias_relu("bias_relu_f32_wide", 8191, 6000, "f32"),
    "bias_relu_bf16_16381x1000": bias_relu("bias_relu_bf16", 16381, 1000, "bf16"),
}


if __name__ == "__main__":
    sys.exit(first_kernel_payloads.main(sys.argv[1:], PAYLOADS, __doc__))
