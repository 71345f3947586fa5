// Off by 2.5%: y = 2.05x + 1 in f16.
#id = affine_map<(i) -> (i)>
func.func @kernel(%x: tensor<1024xf16>) -> tensor<1024xf16> {
  %e = tensor.empty() : tensor<1024xf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf16>) outs(%e : tensor<1024xf16>) {
  ^bb0(%v: f16, %o: f16):
    %two = arith.constant 2.05 : f16
    %one = arith.constant 1.0 : f16
    %m = arith.mulf %v, %two : f16
    %r = arith.addf %m, %one : f16
    linalg.yield %r : f16
  } -> tensor<1024xf16>
  return %y : tensor<1024xf16>
}
