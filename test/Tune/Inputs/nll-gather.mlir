// A negative log-likelihood over 65536 rows of 8 classes: one reduction that gathers each row's value at its
// row (linalg.index) and the row's class.
#v = affine_map<(d0, d1) -> (d1)>
#one = affine_map<(d0, d1) -> (d0)>
func.func @nll(%logp: tensor<65536x8xf32>, %target: tensor<65536xi64>) -> tensor<1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
  %r = linalg.generic {indexing_maps = [#v, #one], iterator_types = ["parallel", "reduction"]}
      ins(%target : tensor<65536xi64>) outs(%init : tensor<1xf32>) {
  ^bb0(%t: i64, %acc: f32):
    %row = linalg.index 1 : index
    %class = arith.index_cast %t : i64 to index
    %x = tensor.extract %logp[%row, %class] : tensor<65536x8xf32>
    %n = arith.negf %x : f32
    %s = arith.addf %n, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}
