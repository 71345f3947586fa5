// RUN: kforge-opt %s -split-input-file -verify-diagnostics -transform-interpreter --kforge-trusted | FileCheck %s
//
// --kforge-trusted lifts the allowlist for hand-written recipes, but not the guards against upstream
// crashes.

// A pass outside the allowlist runs when trusted (strip-debuginfo: every location becomes unknown).
// CHECK-LABEL: func.func @trusted
// CHECK: linalg.matmul {kforge.trusted_mark}
module attributes {transform.with_named_sequence} {
  func.func @trusted(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %r : tensor<8x8xf32>
  }
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %m : (!transform.any_op) -> !transform.any_op
    %p = transform.apply_registered_pass "strip-debuginfo" to %f : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.match ops{["linalg.matmul"]} in %p : (!transform.any_op) -> !transform.any_op
    transform.annotate %mm "kforge.trusted_mark" : !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  func.func @zeros(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %r : tensor<8x8xf32>
  }
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %m : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{has only zeros in static_tile_sizes}}
    %l, %t = transform.structured.tile_using_forall %mm tile_sizes [0, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  func.func @negative(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %r : tensor<8x8xf32>
  }
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %m : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{has a negative value in static_num_threads}}
    %l, %t = transform.structured.tile_using_forall %mm num_threads [-4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
