#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum_f64(%x: tensor<64x1024xf64>) -> tensor<64xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<64xf64>) -> tensor<64xf64>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf64>) outs(%z : tensor<64xf64>) {
  ^bb0(%v: f64, %o: f64):
    %r = arith.addf %v, %o : f64
    linalg.yield %r : f64
  } -> tensor<64xf64>
  return %s : tensor<64xf64>
}
