// A 512^3 matmul: a fraction of a second or more on the CPU untransformed (test/Runner/serve-run-limit.test).
func.func @slow(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<512x512xf32>) -> tensor<512x512xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}
