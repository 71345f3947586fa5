// x[i, j] * rsqrt(var[i / 2] / 60 + eps): a group norm's statistic read with tensor.extract inside the body
// (the group index computed from the loop's), as torch-mlir's GroupNorm leaves it once kforge-partition has
// cut the statistics into a kernel of their own (test/Runner/positive-domain-cpu.test).
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @kernel(%x: tensor<8x16xf32>, %var: tensor<4xf32>) -> tensor<8x16xf32> {
  %c2 = arith.constant 2 : index
  %n = arith.constant 6.000000e+01 : f32
  %eps = arith.constant 1.000000e-05 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %g = arith.divui %i, %c2 : index
    %v = tensor.extract %var[%g] : tensor<4xf32>
    %m = arith.divf %v, %n : f32
    %a = arith.addf %m, %eps : f32
    %s = math.rsqrt %a : f32
    %y = arith.mulf %in, %s : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
