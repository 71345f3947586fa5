func.func @copy(%a: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.copy ins(%a : tensor<64xf32>) outs(%c : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
