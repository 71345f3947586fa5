// A small bf16 batch_matmul with its rounding epilogue (test/Tune/batch-staged.test): 4 batches of 256x512x512.
func.func @batch_matmul_bf16(%A: tensor<4x256x512xbf16>, %B: tensor<4x512x512xbf16>) -> tensor<4x256x512xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x256x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x256x512xf32>) -> tensor<4x256x512xf32>
  %mm = linalg.batch_matmul ins(%A, %B : tensor<4x256x512xbf16>, tensor<4x512x512xbf16>) outs(%init : tensor<4x256x512xf32>) -> tensor<4x256x512xf32>
  %out = tensor.empty() : tensor<4x256x512xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm : tensor<4x256x512xf32>) outs(%out : tensor<4x256x512xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x256x512xbf16>
  return %y : tensor<4x256x512xbf16>
}
