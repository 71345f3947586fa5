// 64x1024 @ 1024x64 in fp16 with every partial sum rounded to fp16 (the accumulator is the f16 output): the
// silent precision downgrade the f16 rule must catch.
func.func @kernel(%x: tensor<64x1024xf16>, %w: tensor<1024x64xf16>) -> tensor<64x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x64xf16>
  %init = linalg.fill ins(%zero : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = linalg.matmul ins(%x, %w : tensor<64x1024xf16>, tensor<1024x64xf16>) outs(%init : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
