// torch.sum(x, dim=1) on 2 x 5 x 7 (small, for the CPU), as torch-mlir imports it: the reduced loop between two parallel ones.
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @sum_middle(%x: tensor<2x5x7xf32>) -> tensor<2x7xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x7xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x7xf32>) -> tensor<2x7xf32>
  %y = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x5x7xf32>) outs(%f : tensor<2x7xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}
