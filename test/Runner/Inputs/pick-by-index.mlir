// out[i] = -logits[i, target[i]]: a negative log-likelihood's gather, its class indices an i64 input.
func.func @pick(%logits: tensor<64x10xf32>, %target: tensor<64xi64>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%target : tensor<64xi64>) outs(%e : tensor<64xf32>) {
  ^bb0(%t: i64, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %t : i64 to index
    %v = tensor.extract %logits[%i, %c] : tensor<64x10xf32>
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
