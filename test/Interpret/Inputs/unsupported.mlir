// An op the interpreter has no meaning for (sample-outputs.test): tensor.generate, whose region computes each
// element.
func.func @gen(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  %g = tensor.generate {
  ^bb0(%i: index):
    tensor.yield %c : f32
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}
