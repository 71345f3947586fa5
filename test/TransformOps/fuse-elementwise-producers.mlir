// RUN: kforge-opt %s -transform-interpreter -split-input-file -verify-diagnostics | FileCheck %s

// A softmax's exp(x - max) has two consumers, the row sum and the division: it is recomputed in both, and
// nothing holds it any more. The fused ops read x and max themselves; the preserved copy of exp that the first
// fusion leaves as an extra result (while exp still had its other consumer) is dropped.
// CHECK-LABEL: func.func @softmax_tail
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[MAX:.*]]: tensor<4xf32>, %[[SUM0:.*]]: tensor<4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<4x64xf32>, tensor<4xf32>) outs(%[[SUM0]] : tensor<4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: } -> tensor<4xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: } -> tensor<4x64xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
#map_2d = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @softmax_tail(%X: tensor<4x64xf32>, %max: tensor<4xf32>, %sum0: tensor<4xf32>) -> tensor<4x64xf32> {
  %empty = tensor.empty() : tensor<4x64xf32>
  %exp = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%X, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%empty : tensor<4x64xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x64xf32>) outs(%sum0 : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%empty : tensor<4x64xf32>) {
  ^bb0(%e: f32, %s: f32, %out: f32):
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %same = transform.kforge.fuse_elementwise_producers %func : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A chain a -> b -> c of elementwise ops collapses into c, which reads X twice (once for a, once itself); a
// reduction producer (the max) is not elementwise and stays.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
#map_1d = affine_map<(i) -> (i)>
#map_all = affine_map<(i) -> ()>
func.func @chain(%X: tensor<64xf32>, %init: tensor<f32>) -> tensor<64xf32> {
  %empty = tensor.empty() : tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#map_1d, #map_all], iterator_types = ["reduction"]}
      ins(%X : tensor<64xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %a = linalg.generic {indexing_maps = [#map_1d, #map_1d], iterator_types = ["parallel"]}
      ins(%X : tensor<64xf32>) outs(%empty : tensor<64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  } -> tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#map_1d, #map_all, #map_1d], iterator_types = ["parallel"]}
      ins(%a, %max : tensor<64xf32>, tensor<f32>) outs(%empty : tensor<64xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %p = arith.mulf %x, %m : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#map_1d, #map_1d, #map_1d], iterator_types = ["parallel"]}
      ins(%b, %X : tensor<64xf32>, tensor<64xf32>) outs(%empty : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %c : tensor<64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %same = transform.kforge.fuse_elementwise_producers %func : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
