// A plain matmul with few outputs and a long K (64x128 outputs, K = 2048): what split_k is for (test/Tune/split-k.test).
func.func @mm(%A: tensor<64x2048xf32>, %B: tensor<2048x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x128xf32>) -> tensor<64x128xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<64x2048xf32>, tensor<2048x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %mm : tensor<64x128xf32>
}
