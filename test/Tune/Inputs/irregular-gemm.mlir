// matmul_irregular of bench/tasks at 200 x 120 x 40 (neither 200 nor 120 a multiple of 32).
#map_2d = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @matmul_irregular(%A: tensor<200x40xf32>, %B: tensor<40x120xf32>) -> tensor<200x120xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<200x120xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<200x120xf32>) -> tensor<200x120xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<200x40xf32>, tensor<40x120xf32>) outs(%init : tensor<200x120xf32>) -> tensor<200x120xf32>
  return %mm : tensor<200x120xf32>
}
