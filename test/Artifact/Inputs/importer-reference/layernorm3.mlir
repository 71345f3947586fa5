// nn.LayerNorm([4, 8, 8]) over a 2x4x8x8 tensor, written by hand in f32 (mean, centred sum of squares).
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#row = affine_map<(n, c, h, w) -> (n)>
#chw = affine_map<(n, c, h, w) -> (c, h, w)>
func.func @layernorm3(%x: tensor<2x4x8x8xf32>, %g: tensor<4x8x8xf32>, %b: tensor<4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x8x8xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<2xf32>
  %q = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %s : tensor<2x4x8x8xf32>, tensor<2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%v: f32, %sum: f32, %acc: f32):
    %n = arith.constant 256.0 : f32
    %m = arith.divf %sum, %n : f32
    %c = arith.subf %v, %m : f32
    %c2 = arith.mulf %c, %c : f32
    %a = arith.addf %acc, %c2 : f32
    linalg.yield %a : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #chw, #chw, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s, %q, %g, %b : tensor<2x4x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>)
      outs(%e : tensor<2x4x8x8xf32>) {
  ^bb0(%v: f32, %sum: f32, %sq: f32, %gv: f32, %bv: f32, %out: f32):
    %n = arith.constant 256.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %m = arith.divf %sum, %n : f32
    %var = arith.divf %sq, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %c = arith.subf %v, %m : f32
    %nv = arith.mulf %c, %r : f32
    %sc = arith.mulf %nv, %gv : f32
    %o = arith.addf %sc, %bv : f32
    linalg.yield %o : f32
  } -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
