// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @gemm_bias_relu
// Y = relu(A * B + bias), fp32, 4096^3; bias is broadcast along rows (one value per output column).
#map_2d = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>
func.func @gemm_bias_relu(%A: tensor<4096x4096xf32>, %B: tensor<4096x4096xf32>, %bias: tensor<4096xf32>)
    -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<4096x4096xf32>, tensor<4096x4096xf32>)
                      outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %biased = linalg.generic {indexing_maps = [#map_2d, #map_col, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4096x4096xf32>, tensor<4096xf32>) outs(%empty : tensor<4096x4096xf32>) {
  ^bb0(%x: f32, %b: f32, %out: f32):
    %s = arith.addf %x, %b : f32
    linalg.yield %s : f32
  } -> tensor<4096x4096xf32>
  %relu = linalg.generic {indexing_maps = [#map_2d, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4096x4096xf32>) outs(%empty : tensor<4096x4096xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4096x4096xf32>
  return %relu : tensor<4096x4096xf32>
}
