// The body calls a function: vectorization cannot handle the call.
#map = affine_map<(i, j) -> (i, j)>
func.func private @scale(%x: f32) -> f32 {
  %two = arith.constant 2.0 : f32
  %y = arith.mulf %x, %two : f32
  return %y : f32
}
func.func @apply_call(%X: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %empty = tensor.empty() : tensor<64x64xf32>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%X : tensor<64x64xf32>) outs(%empty : tensor<64x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = func.call @scale(%x) : (f32) -> f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
