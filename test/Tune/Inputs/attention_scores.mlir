func.func @scores(%q: tensor<8x256x64xf32>, %k: tensor<8x256x64xf32>) -> tensor<8x256x256xf32> {
  %e = tensor.empty() : tensor<8x64x256xf32>
  %t = linalg.transpose ins(%k : tensor<8x256x64xf32>) outs(%e : tensor<8x64x256xf32>) permutation = [0, 2, 1]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<8x256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<8x256x256xf32>) -> tensor<8x256x256xf32>
  %r = linalg.batch_matmul ins(%q, %t : tensor<8x256x64xf32>, tensor<8x64x256xf32>) outs(%f : tensor<8x256x256xf32>) -> tensor<8x256x256xf32>
  return %r : tensor<8x256x256xf32>
}
