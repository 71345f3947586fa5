// The fp32 reference of scale-f16.mlir.
#id = affine_map<(i) -> (i)>
func.func @kernel(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %m = arith.mulf %v, %two : f32
    %r = arith.addf %m, %one : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}
