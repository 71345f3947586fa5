// RUN: kforge-opt %s -transform-interpreter -split-input-file | FileCheck %s

// torch-mlir checks a gather's class indices with cf.assert in the gather's body. fuse_into_containing_op
// leaves the original dead, and canonicalization keeps a dead op with a side effect: on the GPU it stayed on
// the host (cross entropy's loss kernel compiled no proposal). The pattern erases a dead op whose only effect
// is such a check, and keeps one that is used or that has another effect.
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: tensor<8xi64>, %[[B:.*]]: tensor<8xf32>, %[[LOG:.*]]: memref<1xf32>)
// CHECK: %[[USED:.*]] = linalg.generic
// CHECK: cf.assert {{.*}}"index must be larger or equal to 0"
// CHECK: } -> tensor<8xf32>
// CHECK: linalg.generic
// CHECK: memref.store {{.*}}, %[[LOG]]
// CHECK: } -> tensor<8xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[USED]]
#map = affine_map<(d0) -> (d0)>
func.func @checks(%a: tensor<8xi64>, %b: tensor<8xf32>, %log: memref<1xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %c0 = arith.constant 0 : i64
  %c0_index = arith.constant 0 : index
  // Dead, only checks: erased.
  %dead = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %ok = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ok, "index must be larger or equal to 0"
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<8xf32>
  // Used: kept.
  %used = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %ok = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ok, "index must be larger or equal to 0"
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<8xf32>
  // Dead, but it also writes memory: kept.
  %writes = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %ok = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ok, "index must be larger or equal to 0"
    %f = arith.sitofp %in : i64 to f32
    memref.store %f, %log[%c0_index] : memref<1xf32>
    linalg.yield %f : f32
  } -> tensor<8xf32>
  // Dead and pure: canonicalization's, not this pattern's (erased by the canonicalization beside it).
  %pure = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<8xf32>
  return %used : tensor<8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.kforge.erase_unused_checks
    } : !transform.any_op
    transform.yield
  }
}

// -----

// Without the pattern the dead check stays (canonicalization alone): what the pattern is for.
// CHECK-LABEL: func.func @without
// CHECK: linalg.generic
// CHECK: cf.assert
#map = affine_map<(d0) -> (d0)>
func.func @without(%a: tensor<8xi64>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %c0 = arith.constant 0 : i64
  %dead = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %ok = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ok, "index must be larger or equal to 0"
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<8xf32>
  return %b : tensor<8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
