// MinGPT's GELU written by hand: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x^3 as multiplications.
#id = affine_map<(i, j) -> (i, j)>
func.func @gelu_mingpt(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.044715 : f32
    %k = arith.constant 0.797884583 : f32
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %cv3 = arith.mulf %c, %v3 : f32
    %inner = arith.addf %v, %cv3 : f32
    %arg = arith.mulf %k, %inner : f32
    %t = math.tanh %arg : f32
    %onep = arith.addf %one, %t : f32
    %hv = arith.mulf %half, %v : f32
    %r = arith.mulf %hv, %onep : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
