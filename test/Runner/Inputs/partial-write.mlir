// Computes only the first 32 rows; the rest of the output is never written.
func.func @kernel(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %one = arith.constant 1.0 : f32
  %out = tensor.empty() : tensor<64x64xf32>
  %xs = tensor.extract_slice %x[0, 0] [32, 64] [1, 1] : tensor<64x64xf32> to tensor<32x64xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = linalg.matmul ins(%xs, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%init : tensor<32x64xf32>) -> tensor<32x64xf32>
  %r = tensor.insert_slice %y into %out[0, 0] [32, 64] [1, 1] : tensor<32x64xf32> into tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
