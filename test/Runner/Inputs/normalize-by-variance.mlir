// A batch norm's normalisation in eval mode: (x - mean) * rsqrt(var + eps), var a running variance (non-negative
// in any real model).
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @normalize(%x: tensor<64x32xf32>, %mean: tensor<32xf32>, %var: tensor<32xf32>) -> tensor<64x32xf32> {
  %eps = arith.constant 1.0e-05 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %r = linalg.generic {indexing_maps = [#row, #col, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean, %var : tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%in: f32, %m: f32, %v: f32, %out: f32):
    %shifted = arith.addf %v, %eps : f32
    %scale = math.rsqrt %shifted : f32
    %centred = arith.subf %in, %m : f32
    %y = arith.mulf %centred, %scale : f32
    linalg.yield %y : f32
  } -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}
