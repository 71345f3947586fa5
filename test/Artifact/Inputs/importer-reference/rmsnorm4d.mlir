// x / sqrt(mean(x^2, dim=1) + 1e-5) over a 2x4x8x8 tensor, written by hand (sum over d1, then the divide).
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#red = affine_map<(n, c, h, w) -> (n, h, w)>
func.func @rmsnorm4d(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%x : tensor<2x4x8x8xf32>) outs(%f : tensor<2x8x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<2x8x8xf32>
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #red, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<2x4x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x4x8x8xf32>) {
  ^bb0(%v: f32, %sum: f32, %out: f32):
    %n = arith.constant 4.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %m = arith.divf %sum, %n : f32
    %me = arith.addf %m, %eps : f32
    %r = math.sqrt %me : f32
    %q = arith.divf %v, %r : f32
    linalg.yield %q : f32
  } -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
