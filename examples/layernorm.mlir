// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @layernorm
// Layer normalisation of 8192 rows of 4096 fp32 values with affine gamma/beta, eps = 1e-5:
// y = (x - mean) * rsqrt(mean((x - mean)^2) + eps) * gamma + beta.
#map_2d = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
#map_col = affine_map<(i, j) -> (j)>
func.func @layernorm(%X: tensor<8192x4096xf32>, %gamma: tensor<4096xf32>, %beta: tensor<4096xf32>)
    -> tensor<8192x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty_row = tensor.empty() : tensor<8192xf32>
  %empty = tensor.empty() : tensor<8192x4096xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%empty_row : tensor<8192xf32>) -> tensor<8192xf32>
  %sum = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%X : tensor<8192x4096xf32>) outs(%sum_init : tensor<8192xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  %centered = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%X, %sum : tensor<8192x4096xf32>, tensor<8192xf32>) outs(%empty : tensor<8192x4096xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %inv_n = arith.constant 2.44140625e-04 : f32
    %mean = arith.mulf %s, %inv_n : f32
    %c = arith.subf %x, %mean : f32
    linalg.yield %c : f32
  } -> tensor<8192x4096xf32>
  %sq_init = linalg.fill ins(%zero : f32) outs(%empty_row : tensor<8192xf32>) -> tensor<8192xf32>
  %sq = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%centered : tensor<8192x4096xf32>) outs(%sq_init : tensor<8192xf32>) {
  ^bb0(%c: f32, %acc: f32):
    %c2 = arith.mulf %c, %c : f32
    %s = arith.addf %c2, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  %y = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_col, #map_col, #map_2d],
                       iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq, %gamma, %beta : tensor<8192x4096xf32>, tensor<8192xf32>, tensor<4096xf32>, tensor<4096xf32>)
      outs(%empty : tensor<8192x4096xf32>) {
  ^bb0(%c: f32, %s: f32, %g: f32, %b: f32, %out: f32):
    %inv_n = arith.constant 2.44140625e-04 : f32
    %eps = arith.constant 1.0e-05 : f32
    %var = arith.mulf %s, %inv_n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %c, %r : f32
    %ng = arith.mulf %n, %g : f32
    %y = arith.addf %ng, %b : f32
    linalg.yield %y : f32
  } -> tensor<8192x4096xf32>
  return %y : tensor<8192x4096xf32>
}
