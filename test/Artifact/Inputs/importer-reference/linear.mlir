// nn.Linear(64, 32) written by hand: y = x W^T + b as one contraction generic and one bias generic.
#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (j, k)>
#y = affine_map<(i, j, k) -> (i, j)>
func.func @linear(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<16x64xf32>, tensor<32x64xf32>) outs(%f : tensor<16x32xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%v: f32, %c: f32, %out: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
