// torch's x @ v with v of K x 1 (bench/kernelbench/modules/l1_matvec.py), as torch-mlir imports it: a matmul
// with one column, at a smaller size.
func.func @matvec(%A: tensor<256x4096xf32>, %v: tensor<4096x1xf32>) -> tensor<256x1xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %empty = tensor.empty() : tensor<256x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x1xf32>) -> tensor<256x1xf32>
  %y = linalg.matmul ins(%A, %v : tensor<256x4096xf32>, tensor<4096x1xf32>) outs(%init : tensor<256x1xf32>) -> tensor<256x1xf32>
  return %y : tensor<256x1xf32>
}
