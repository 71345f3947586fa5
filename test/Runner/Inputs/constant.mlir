// Output that does not depend on the inputs: a check against it proves nothing.
func.func @kernel(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %y = linalg.fill ins(%c : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
