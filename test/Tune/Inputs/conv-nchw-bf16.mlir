// A 3x3 NCHW convolution in bf16 throughout (bf16 accumulation): the implicit GEMM is fp32 only.
func.func @conv_bf16(%x: tensor<2x8x18x18xbf16>, %w: tensor<32x8x3x3xbf16>) -> tensor<2x32x16x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<2x32x16x16xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<2x32x16x16xbf16>) -> tensor<2x32x16x16xbf16>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x8x18x18xbf16>, tensor<32x8x3x3xbf16>) outs(%init : tensor<2x32x16x16xbf16>) -> tensor<2x32x16x16xbf16>
  return %conv : tensor<2x32x16x16xbf16>
}
