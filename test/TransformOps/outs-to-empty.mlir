// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// An elementwise op that overwrites its output gets a fresh empty destination; a reduction, which reads
// its output, keeps it.
// CHECK-LABEL: func.func @outs
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[SHARED:.*]]: tensor<4x8xf32>, %[[ACC:.*]]: tensor<4xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[EMPTY]] : tensor<4x8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[ACC]] : tensor<4xf32>)
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @outs(%x: tensor<4x8xf32>, %shared: tensor<4x8xf32>, %acc: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%shared : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %in, %out : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %e, %s : tensor<4x8xf32>, tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %generics = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %updated = transform.kforge.outs_to_empty %generics : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @on_buffers(%x: memref<4xf32>, %y: memref<4xf32>) {
  linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %copy = transform.structured.match ops{["linalg.copy"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a linalg op on tensors}}
    %updated = transform.kforge.outs_to_empty %copy : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
