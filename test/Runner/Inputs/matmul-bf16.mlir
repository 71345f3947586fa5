// bf16 inputs, fp32 accumulation and output (the usual mixed-precision matmul).
func.func @kernel(%x: tensor<32x64xbf16>, %w: tensor<64x16xbf16>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<32x64xbf16>, tensor<64x16xbf16>) outs(%init : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
