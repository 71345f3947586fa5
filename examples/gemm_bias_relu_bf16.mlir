// RUN: kforge-opt %s | FileCheck %s
// CHECK-LABEL: func.func @gemm_bias_relu_bf16
// Y = bf16(relu(A * B + bias)), 4096^3: bf16 operands, bias and result, fp32 accumulation (as PyTorch's bf16
// matmul). The tensor-core example: `kforge-tune examples/gemm_bias_relu_bf16.mlir --target gpu` proposes mma first.
#map_id = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>
func.func @gemm_bias_relu_bf16(%A: tensor<4096x4096xbf16>, %B: tensor<4096x4096xbf16>, %bias: tensor<4096xbf16>) -> tensor<4096x4096xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %out_bf16 = tensor.empty() : tensor<4096x4096xbf16>
  %y = linalg.generic {indexing_maps = [#map_id, #map_col, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4096x4096xf32>, tensor<4096xbf16>) outs(%out_bf16 : tensor<4096x4096xbf16>) {
  ^bb0(%x: f32, %b: bf16, %o: bf16):
    %bf = arith.extf %b : bf16 to f32
    %s = arith.addf %x, %bf : f32
    %r = arith.maximumf %s, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}
