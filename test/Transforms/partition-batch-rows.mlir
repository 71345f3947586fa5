// Rows with a batch dimension (attention's softmax over 4 x 16 rows of 64) become rows of one dimension inside
// the dispatch, so the row kernels' schedules (lanes, [rows, columns]) apply; the reshapes go to the entry
// (views between kernels), and the payload written for the tuner takes and returns the 2-D tensors.
// RUN: kforge-opt %s --kforge-partition | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @softmax3(%x: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x16x64xf32>
  %re = tensor.empty() : tensor<4x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<4x16xf32>) -> tensor<4x16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x16x64xf32>) outs(%minit : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<4x16x64xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x16x64xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<4x16xf32>) -> tensor<4x16xf32>
  %den = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<4x16x64xf32>) outs(%sinit : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %soft = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %den : tensor<4x16x64xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x16x64xf32>
  return %soft : tensor<4x16x64xf32>
}

// CHECK:      func.func private @[[K:k_[0-9a-f]+]](%[[X:.*]]: tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction"]
// CHECK:        return %{{.*}} : tensor<64x64xf32>
// CHECK:      func.func @softmax3(%[[ARG:.*]]: tensor<4x16x64xf32>)
// CHECK-NEXT:   %[[C:.*]] = tensor.collapse_shape %[[ARG]] {{\[\[}}0, 1], [2]]
// CHECK-NEXT:   %[[R:.*]] = call @[[K]](%[[C]])
// CHECK-NEXT:   %[[E:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [4, 16, 64]
// CHECK-NEXT:   return %[[E]]
