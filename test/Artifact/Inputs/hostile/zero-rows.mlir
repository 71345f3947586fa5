func.func @copy(%a: tensor<0x64xf32>, %c: tensor<0x64xf32>) -> tensor<0x64xf32> {
  %r = linalg.copy ins(%a : tensor<0x64xf32>) outs(%c : tensor<0x64xf32>) -> tensor<0x64xf32>
  return %r : tensor<0x64xf32>
}
