// A payload that carries its own transform script: the interpreter would run it instead of the recipe.
module attributes {transform.with_named_sequence} {
  func.func @copy(%a: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
    %r = linalg.copy ins(%a : tensor<64xf32>) outs(%c : tensor<64xf32>) -> tensor<64xf32>
    return %r : tensor<64xf32>
  }
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
