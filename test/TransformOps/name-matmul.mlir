// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics -mlir-print-local-scope | FileCheck %s

// A generic computing C += A * B^T (a batch_matmul block of Q @ K^T once its unit batch is folded) named a
// matmul with its maps kept; upstream specialize names it with the default maps (B read as K x N).
// CHECK-LABEL: func.func @transposed_b
// CHECK: linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%{{.*}}, %{{.*}} : memref<16x8xf32>, memref<32x8xf32>)
// CHECK-NEXT: return
func.func @transposed_b(%a: memref<16x8xf32>, %b: memref<32x8xf32>, %c: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xf32>, memref<32x8xf32>) outs(%c : memref<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %m = transform.kforge.name_matmul %g : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// bf16 operands extended to the f32 accumulator, A transposed: a matmul with A's (k, m) map.
// CHECK-LABEL: func.func @extended_transposed_a
// CHECK: linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%{{.*}}, %{{.*}} : memref<8x16xbf16>, memref<8x32xbf16>) outs(%{{.*}} : memref<16x32xf32>)
func.func @extended_transposed_a(%a: memref<8x16xbf16>, %b: memref<8x32xbf16>, %c: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<8x32xbf16>) outs(%c : memref<16x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %m = transform.kforge.name_matmul %g : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Not a matmul (a max, not a sum of products): refused, the generic left as it is.
func.func @max_plus(%a: memref<16x8xf32>, %b: memref<8x32xf32>, %c: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xf32>, memref<8x32xf32>) outs(%c : memref<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{not a matmul: expected a body out + a * b}}
    %m = transform.kforge.name_matmul %g : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
