// A bf16 batch_matmul plus a residual (test/Tune/batch-staged.test): its add must stay an epilogue generic.
#id = affine_map<(b, i, j) -> (b, i, j)>
func.func @batch_matmul_residual(%A: tensor<4x256x512xbf16>, %B: tensor<4x512x512xbf16>, %R: tensor<4x256x512xf32>) -> tensor<4x256x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x256x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x256x512xf32>) -> tensor<4x256x512xf32>
  %mm = linalg.batch_matmul ins(%A, %B : tensor<4x256x512xbf16>, tensor<4x512x512xbf16>) outs(%init : tensor<4x256x512xf32>) -> tensor<4x256x512xf32>
  %out = tensor.empty() : tensor<4x256x512xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %R : tensor<4x256x512xf32>, tensor<4x256x512xf32>) outs(%out : tensor<4x256x512xf32>) {
  ^bb0(%x: f32, %r: f32, %o: f32):
    %s = arith.addf %x, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x256x512xf32>
  return %y : tensor<4x256x512xf32>
}
