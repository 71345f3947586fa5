// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @row_sum
// y[i] = sum_j X[i, j], fp32, 1024 x 1024: examples/row_sum.mlir at a size a CPU tunes in seconds.
#map_2d = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @row_sum(%X: tensor<1024x1024xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024xf32>) -> tensor<1024xf32>
  %sum = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%X : tensor<1024x1024xf32>) outs(%init : tensor<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %sum : tensor<1024xf32>
}
