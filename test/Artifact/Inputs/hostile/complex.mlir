func.func @copy(%a: tensor<64xcomplex<f32>>, %c: tensor<64xcomplex<f32>>) -> tensor<64xcomplex<f32>> {
  %r = linalg.copy ins(%a : tensor<64xcomplex<f32>>) outs(%c : tensor<64xcomplex<f32>>) -> tensor<64xcomplex<f32>>
  return %r : tensor<64xcomplex<f32>>
}
