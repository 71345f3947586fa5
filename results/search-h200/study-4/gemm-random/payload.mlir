// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @gemm
// C = A * B, fp32, 4096^3, in the form importers produce (the result is returned).
func.func @gemm(%A: tensor<4096x4096xf32>, %B: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %C = linalg.matmul ins(%A, %B : tensor<4096x4096xf32>, tensor<4096x4096xf32>)
                     outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %C : tensor<4096x4096xf32>
}
