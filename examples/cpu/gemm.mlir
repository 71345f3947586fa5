// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @gemm
// C = A * B, fp32, 128x256 outputs, K = 512: a plain matmul small enough to tune on a CPU in seconds (split_k
// applies to it, unlike to gemm_bias_relu).
func.func @gemm(%A: tensor<128x512xf32>, %B: tensor<512x256xf32>) -> tensor<128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x256xf32>) -> tensor<128x256xf32>
  %C = linalg.matmul ins(%A, %B : tensor<128x512xf32>, tensor<512x256xf32>)
                     outs(%init : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %C : tensor<128x256xf32>
}
