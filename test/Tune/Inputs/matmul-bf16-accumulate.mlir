// A bf16 matmul that accumulates in bf16 (its result type): linalg.matmul's own semantics, not torch-mlir's (f32, then a truncation).
func.func @mm(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %c = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<512x512xbf16>
  %f = linalg.fill ins(%c : bf16) outs(%e : tensor<512x512xbf16>) -> tensor<512x512xbf16>
  %y = linalg.matmul ins(%a, %b : tensor<512x512xbf16>, tensor<512x512xbf16>) outs(%f : tensor<512x512xbf16>) -> tensor<512x512xbf16>
  return %y : tensor<512x512xbf16>
}
