// Each row's dot product of two inputs (cosine similarity's numerator): a row reduction reading rows of two
// arguments.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_dot(%a: tensor<1024x32000xf32>, %b: tensor<1024x32000xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %dot = linalg.generic {indexing_maps = [#rows, #rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : tensor<1024x32000xf32>, tensor<1024x32000xf32>) outs(%init : tensor<1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %dot : tensor<1024xf32>
}
