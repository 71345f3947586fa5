// The fp32 reference of matmul-bf16.mlir (the runner rounds its inputs to bf16 for both).
func.func @kernel(%x: tensor<32x64xf32>, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%init : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
