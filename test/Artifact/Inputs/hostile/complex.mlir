func.func @double(%a: tensor<64xcomplex<f32>>, %c: tensor<64xcomplex<f32>>) -> tensor<64xcomplex<f32>> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<64xcomplex<f32>>) outs(%c : tensor<64xcomplex<f32>>) {
  ^bb0(%x: complex<f32>, %o: complex<f32>):
    %y = complex.add %x, %x : complex<f32>
    linalg.yield %y : complex<f32>
  } -> tensor<64xcomplex<f32>>
  return %r : tensor<64xcomplex<f32>>
}
