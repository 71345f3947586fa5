// Batch rows are collapsed all or none: in a GroupNorm-like dispatch the row statistic's reduction could be
// collapsed (its batch loops 6 x 4 are contiguous in its maps), but its consumer reads a per-(group, channel)
// scale along the second batch loop alone (map (d1, d2)), so it cannot. Collapsing only the reduction left an
// expand_shape between the statistic and its consumer, which fuse cannot cross ("could not find next producer
// to fuse into container" on every candidate of l2_linear_group_norm_hardtanh); nothing is collapsed now.
// RUN: kforge-opt %s --kforge-partition | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#scale = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @group_stat(%x: tensor<6x4x4xf32>, %w: tensor<4x4xf32>) -> tensor<6x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x4x4xf32>
  %re = tensor.empty() : tensor<6x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<6x4xf32>) -> tensor<6x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<6x4x4xf32>) outs(%sinit : tensor<6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<6x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #scale, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<6x4x4xf32>, tensor<6x4xf32>, tensor<4x4xf32>) outs(%e : tensor<6x4x4xf32>) {
  ^bb0(%a: f32, %s: f32, %k: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    %r = arith.mulf %d, %k : f32
    linalg.yield %r : f32
  } -> tensor<6x4x4xf32>
  return %y : tensor<6x4x4xf32>
}

// CHECK:      func.func private @[[K:k_[0-9a-f]+]](%{{.*}}: tensor<6x4x4xf32>, %{{.*}}: tensor<4x4xf32>) -> tensor<6x4x4xf32>
// CHECK-NOT:    tensor.expand_shape
// CHECK-NOT:    tensor.collapse_shape
// CHECK:        iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:        iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:        return %{{.*}} : tensor<6x4x4xf32>
// CHECK:      func.func @group_stat(
// CHECK-NEXT:   %[[R:.*]] = call @[[K]](
// CHECK-NEXT:   return %[[R]]
