// C = A @ B, fp32, 8192^3 (bench's matmul_8192_*): operands of 256 MB each, far over an H100's or H200's L2.
func.func @gemm_8192(%A: tensor<8192x8192xf32>, %B: tensor<8192x8192xf32>) -> tensor<8192x8192xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8192x8192xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<8192x8192xf32>, tensor<8192x8192xf32>) outs(%init : tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
  return %mm : tensor<8192x8192xf32>
}
