// Importers reshape an argument anew for each use: two reductions of the same rows, each through its own
// collapse_shape of %x (a layernorm's mean and its mean of squares), are siblings of one row kernel, and the
// dispatch takes the reshaped data once.
// RUN: kforge-opt %s --kforge-partition | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @stats(%x: tensor<1x8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
  %squares = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    %r = arith.addf %s, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum, %squares : tensor<8xf32>, tensor<8xf32>
}

// CHECK:      func.func private @[[K:k_[0-9a-f]+]](%[[X:.*]]: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-COUNT-2: ins(%[[X]] : tensor<8x16xf32>)
// CHECK:      func.func @stats(%[[ARG:.*]]: tensor<1x8x16xf32>)
// CHECK-NEXT:   %[[C:.*]] = tensor.collapse_shape %[[ARG]]
// CHECK-NEXT:   %[[R:.*]]:2 = call @[[K]](%[[C]])
// CHECK-NEXT:   return %[[R]]#0, %[[R]]#1
