#map_2d = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @matmul_irregular(%A: tensor<2000x1000xf32>, %B: tensor<1000x3000xf32>) -> tensor<2000x3000xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2000x3000xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2000x3000xf32>) -> tensor<2000x3000xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<2000x1000xf32>, tensor<1000x3000xf32>) outs(%init : tensor<2000x3000xf32>) -> tensor<2000x3000xf32>
  return %mm : tensor<2000x3000xf32>
}
