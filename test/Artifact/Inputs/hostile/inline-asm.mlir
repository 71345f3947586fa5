func.func @copy(%a: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  llvm.inline_asm has_side_effects "nop", "" : () -> ()
  %r = linalg.copy ins(%a : tensor<64xf32>) outs(%c : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
