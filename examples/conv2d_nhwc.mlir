// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @conv2d_nhwc
// 3x3 convolution, stride 1, no padding: input 8x58x58x64 (NHWC), filter 3x3x64x128 (HWCF), output 8x56x56x128.
func.func @conv2d_nhwc(%input: tensor<8x58x58x64xf32>, %filter: tensor<3x3x64x128xf32>) -> tensor<8x56x56x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x56x56x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x56x56x128xf32>) -> tensor<8x56x56x128xf32>
  %out = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%input, %filter : tensor<8x58x58x64xf32>, tensor<3x3x64x128xf32>)
      outs(%init : tensor<8x56x56x128xf32>) -> tensor<8x56x56x128xf32>
  return %out : tensor<8x56x56x128xf32>
}
