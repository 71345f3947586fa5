#!/usr/bin/env python3
"""Writes the payloads of the transposed-operand and ragged-row check into DIR: nn.Linear as importers write it
(x @ W^T, the transpose a linalg.transpose that kforge-normalize-importer folds into the matmul's maps) in fp32
and bf16 (fp32 accumulation, bf16 result), an irregular fp32 Linear, attention's scores (Q @ K^T, batched), and
row kernels whose width no warp multiple divides (softmax 4095 and 50257 wide, layernorm and row sum 4095),
masked elementwise tiles (bias + relu on primes), and bf16 contractions in the forms and shapes the tensor
cores now take (A as K x M, a generic with its extensions written out, a Linear on primes: tc_*).

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


def tensor_core_form(name, m, n, k, form):
    """bf16 operands, f32 accumulation, in the forms issue 34 routes to the tensor cores: "a_transposed" (A stored
    K x M: x.T @ w) or "generic_extf" (a linalg.generic with the operands extended inside its body)."""
    head = f"func.func @{name}("
    fill = f"""  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
"""
    if form == "a_transposed":
        return (head + f"%a: tensor<{k}x{m}xbf16>, %b: tensor<{k}x{n}xbf16>) -> tensor<{m}x{n}xf32> {{\n" + fill +
                f"""  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<{k}x{m}xbf16>, tensor<{k}x{n}xbf16>) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
""")
    return (head + f"%a: tensor<{m}x{k}xbf16>, %b: tensor<{k}x{n}xbf16>) -> tensor<{m}x{n}xf32> {{\n" + fill +
            f"""  %r = linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%a, %b : tensor<{m}x{k}xbf16>, tensor<{k}x{n}xbf16>) outs(%f : tensor<{m}x{n}xf32>) {{
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
""")


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
    "tc_a_transposed_bf16_4096": tensor_core_form("tc_a_transposed", 4096, 4096, 4096, "a_transposed"),
    "tc_generic_extf_bf16_4096": tensor_core_form("tc_generic_extf", 4096, 4096, 4096, "generic_extf"),
    "tc_linear_prime_bf16_4093x4099x4104": linear("tc_linear_prime_bf16", 4093, 4099, 4104, "bf16"),
}


if __name__ == "__main__":
    sys.exit(first_kernel_payloads.main(sys.argv[1:], PAYLOADS, __doc__))
