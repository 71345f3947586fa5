func.func @linear(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32>) -> tensor<256x1024xf32> {
  %e = tensor.empty() : tensor<512x1024xf32>
  %t = linalg.transpose ins(%w : tensor<1024x512xf32>) outs(%e : tensor<512x1024xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<256x1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r = linalg.matmul ins(%x, %t : tensor<256x512xf32>, tensor<512x1024xf32>) outs(%f : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}
