// Importers reshape an argument anew for each use: two reductions of the same rows, each through its own
// collapse_shape of %x (a layernorm's mean and its mean of squares), are siblings of one row kernel, and the
// dispatch takes the reshaped data once. Here the variance reads both, and only it leaves the dispatch.
// RUN: kforge-opt %s -split-input-file --kforge-partition | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#rows = affine_map<(d0) -> (d0)>
func.func @stats(%x: tensor<1x8x16xf32>) -> tensor<8xf32> {
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
  %var = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel"]}
      ins(%sum, %squares : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%m: f32, %q: f32, %o: f32):
    %mm = arith.mulf %m, %m : f32
    %d = arith.subf %q, %mm : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  return %var : tensor<8xf32>
}

// CHECK-LABEL: func.func private @{{k_[0-9a-f]+}}(%{{.*}}: tensor<8x16xf32>) -> tensor<8xf32>
// CHECK-COUNT-2: ins(%arg0 : tensor<8x16xf32>)
// CHECK:      func.func @stats(%[[ARG:.*]]: tensor<1x8x16xf32>)
// CHECK-NEXT:   %[[C:.*]] = tensor.collapse_shape %[[ARG]]
// CHECK-NEXT:   %[[R:.*]] = call @{{k_[0-9a-f]+}}(%[[C]])
// CHECK-NEXT:   return %[[R]] :

// -----

// Both statistics returned: a dispatch's results are one op's (kforge-tune schedules the op behind its first
// result; on the GPU the other sibling was left outside every kernel and no proposal compiled), so each is a
// dispatch of its own, reading its own reshape of %x.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @stats2(%x: tensor<1x8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
  %squares = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    %r = arith.addf %s, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum, %squares : tensor<8xf32>, tensor<8xf32>
}

// CHECK:      func.func private @[[S:k_[0-9a-f]+]](%{{.*}}: tensor<8x16xf32>) -> tensor<8xf32>
// CHECK:      func.func private @[[Q:k_[0-9a-f]+]](%{{.*}}: tensor<8x16xf32>) -> tensor<8xf32>
// CHECK:      func.func @stats2(%[[ARG:.*]]: tensor<1x8x16xf32>)
// CHECK:        %[[A:.*]] = call @[[S]](
// CHECK:        %[[B:.*]] = call @[[Q]](
// CHECK-NEXT:   return %[[A]], %[[B]] :
