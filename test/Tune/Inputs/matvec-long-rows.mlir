// a matvec with rows of 1048576 (2^20) elements
func.func @matvec(%A: tensor<16x1048576xf32>, %x: tensor<1048576xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.matvec ins(%A, %x : tensor<16x1048576xf32>, tensor<1048576xf32>) outs(%init : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
