// relu(A B + bias) over 997 x 1009 with K = 509 (fp32): primes everywhere; K is not a multiple of block_k.
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @mm_bias_relu(%A: tensor<997x509xf32>, %B: tensor<509x1009xf32>, %bias: tensor<1009xf32>) -> tensor<997x1009xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<997x1009xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<997x1009xf32>) -> tensor<997x1009xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<997x509xf32>, tensor<509x1009xf32>) outs(%init : tensor<997x1009xf32>) -> tensor<997x1009xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<997x1009xf32>, tensor<1009xf32>) outs(%empty : tensor<997x1009xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<997x1009xf32>
  return %r : tensor<997x1009xf32>
}
