// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @gemm_scale_gelu
// Y = gelu_tanh(scale * (A * B)), fp32, 4096^3, scale = 0.5.
// gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#map_2d = affine_map<(i, j) -> (i, j)>
func.func @gemm_scale_gelu(%A: tensor<4096x4096xf32>, %B: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<4096x4096xf32>, tensor<4096x4096xf32>)
                      outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %gelu = linalg.generic {indexing_maps = [#map_2d, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4096x4096xf32>) outs(%empty : tensor<4096x4096xf32>) {
  ^bb0(%v: f32, %out: f32):
    %scale = arith.constant 0.5 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.044715 : f32
    %sqrt_2_over_pi = arith.constant 0.7978845608 : f32
    %x = arith.mulf %v, %scale : f32
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x2, %x : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %inner = arith.addf %x, %cx3 : f32
    %arg = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %arg : f32
    %onep = arith.addf %one, %t : f32
    %hx = arith.mulf %half, %x : f32
    %y = arith.mulf %hx, %onep : f32
    linalg.yield %y : f32
  } -> tensor<4096x4096xf32>
  return %gelu : tensor<4096x4096xf32>
}
