// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @batch_matmul
// C[b] = A[b] * B[b], fp32, 16 batches of 1024^3.
func.func @batch_matmul(%A: tensor<16x1024x1024xf32>, %B: tensor<16x1024x1024xf32>) -> tensor<16x1024x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x1024x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x1024x1024xf32>) -> tensor<16x1024x1024xf32>
  %C = linalg.batch_matmul ins(%A, %B : tensor<16x1024x1024xf32>, tensor<16x1024x1024xf32>)
                           outs(%init : tensor<16x1024x1024xf32>) -> tensor<16x1024x1024xf32>
  return %C : tensor<16x1024x1024xf32>
}
