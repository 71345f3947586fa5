func.func @linear(%x: tensor<256x512xbf16>, %w: tensor<1024x512xbf16>) -> tensor<256x1024xbf16> {
  %e = tensor.empty() : tensor<512x1024xbf16>
  %t = linalg.transpose ins(%w : tensor<1024x512xbf16>) outs(%e : tensor<512x1024xbf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : bf16
  %o = tensor.empty() : tensor<256x1024xbf16>
  %f = linalg.fill ins(%z : bf16) outs(%o : tensor<256x1024xbf16>) -> tensor<256x1024xbf16>
  %r = linalg.matmul ins(%x, %t : tensor<256x512xbf16>, tensor<512x1024xbf16>) outs(%f : tensor<256x1024xbf16>) -> tensor<256x1024xbf16>
  return %r : tensor<256x1024xbf16>
}
