// The reference's values (x @ w + 1), and one more element written just past the end of its output (row 64 of
// a 64 x 64 result): the store a partial tile's unguarded edge would make. Every output element is right; only
// the guard bytes after the buffer show it.
func.func @kernel(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %z = tensor.insert %one into %y[%c64, %c0] : tensor<64x64xf32>
  return %z : tensor<64x64xf32>
}
