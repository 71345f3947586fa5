// nn.Linear in bf16 on prime sizes: y = relu(x @ W^T + bias), x 997 x 512, W as [out, in] = 1009 x 512, fp32
// accumulation, the result rounded to bf16. No block of whole 16x8 instruction tiles divides M or N.
func.func @linear_bias_relu_bf16(%x: tensor<997x512xbf16>, %w: tensor<1009x512xbf16>, %bias: tensor<1009xf32>) -> tensor<997x1009xbf16> {
  %e = tensor.empty() : tensor<512x1009xbf16>
  %t = linalg.transpose ins(%w : tensor<1009x512xbf16>) outs(%e : tensor<512x1009xbf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<997x1009xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<997x1009xf32>) -> tensor<997x1009xf32>
  %r = linalg.matmul ins(%x, %t : tensor<997x512xbf16>, tensor<512x1009xbf16>) outs(%f : tensor<997x1009xf32>) -> tensor<997x1009xf32>
  %ob = tensor.empty() : tensor<997x1009xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<997x1009xf32>, tensor<1009xf32>) outs(%ob : tensor<997x1009xbf16>) {
  ^bb0(%v: f32, %b: f32, %u: bf16):
    %s = arith.addf %v, %b : f32
    %m = arith.maximumf %s, %z : f32
    %tr = arith.truncf %m : f32 to bf16
    linalg.yield %tr : bf16
  } -> tensor<997x1009xbf16>
  return %y : tensor<997x1009xbf16>
}
