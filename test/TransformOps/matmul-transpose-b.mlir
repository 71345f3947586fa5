// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics -mlir-print-local-scope | FileCheck %s

// A @ B with B as K x N: B copied by a linalg.transpose to N x K, the matmul reading the copy as (n, k), its
// marks kept; the result unchanged.
// CHECK-LABEL: func.func @a_times_b
// CHECK:      %[[E:.*]] = tensor.empty() : tensor<48x32xf32>
// CHECK:      %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<32x48xf32>) outs(%[[E]] : tensor<48x32xf32>) permutation = [1, 0]
// CHECK:      linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK-SAME: {kforge.mark} ins(%arg0, %[[T]] : tensor<64x32xf32>, tensor<48x32xf32>)
func.func @a_times_b(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.matmul {kforge.mark} ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %new, %t = transform.kforge.matmul_transpose_b %mm : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// B already N x K (nn.Linear's layout): refused with the reason.
func.func @linear(%a: tensor<64x32xf32>, %w: tensor<48x32xf32>) -> tensor<64x48xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %w : tensor<64x32xf32>, tensor<48x32xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{expected a matmul reading A as (m, k) and B as (k, n)}}
    %new, %t = transform.kforge.matmul_transpose_b %mm : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
