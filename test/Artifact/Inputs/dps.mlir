// Destination-passing: the second argument is the output.
#id = affine_map<(i) -> (i)>
func.func @scale(%x: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%out : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %a, %two : f32
    linalg.yield %y : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
