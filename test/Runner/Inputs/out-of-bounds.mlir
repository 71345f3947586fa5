// Reads far outside its input (a wild index): on the CPU the process faults.
func.func @kernel(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %far = arith.constant 1000000000000 : index
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%far, %c0] : tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %y = linalg.fill ins(%v : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
