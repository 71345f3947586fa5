// nn.Linear in bf16 as y = x @ W^T (W as [out, in]), fp32 accumulation, the result rounded to bf16.
func.func @linear_bf16(%x: tensor<256x512xbf16>, %w: tensor<1024x512xbf16>) -> tensor<256x1024xbf16> {
  %e = tensor.empty() : tensor<512x1024xbf16>
  %t = linalg.transpose ins(%w : tensor<1024x512xbf16>) outs(%e : tensor<512x1024xbf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<256x1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r = linalg.matmul ins(%x, %t : tensor<256x512xbf16>, tensor<512x1024xbf16>) outs(%f : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %ob = tensor.empty() : tensor<256x1024xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<256x1024xf32>) outs(%ob : tensor<256x1024xbf16>) {
  ^bb0(%v: f32, %u: bf16):
    %tr = arith.truncf %v : f32 to bf16
    linalg.yield %tr : bf16
  } -> tensor<256x1024xbf16>
  return %y : tensor<256x1024xbf16>
}
