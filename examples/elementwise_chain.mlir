// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @elementwise_chain
// Y = gelu_tanh(X + b) * X over 16 x 1M fp32; b is broadcast along rows.
#map_2d = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>
func.func @elementwise_chain(%X: tensor<16x1048576xf32>, %b: tensor<1048576xf32>) -> tensor<16x1048576xf32> {
  %empty = tensor.empty() : tensor<16x1048576xf32>
  %y = linalg.generic {indexing_maps = [#map_2d, #map_col, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%X, %b : tensor<16x1048576xf32>, tensor<1048576xf32>) outs(%empty : tensor<16x1048576xf32>) {
  ^bb0(%x: f32, %bv: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.044715 : f32
    %sqrt_2_over_pi = arith.constant 0.7978845608 : f32
    %v = arith.addf %x, %bv : f32
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %cv3 = arith.mulf %c, %v3 : f32
    %inner = arith.addf %v, %cv3 : f32
    %arg = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %arg : f32
    %onep = arith.addf %one, %t : f32
    %hv = arith.mulf %half, %v : f32
    %g = arith.mulf %hv, %onep : f32
    %r = arith.mulf %g, %x : f32
    linalg.yield %r : f32
  } -> tensor<16x1048576xf32>
  return %y : tensor<16x1048576xf32>
}
