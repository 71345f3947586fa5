// bench/tasks' linear_prime_bf16: nn.Linear (x W^T) in bf16 on prime-sized M and N (4093 x 4099, K 4104), as
// torch-mlir writes it.
#map_id = affine_map<(i, j) -> (i, j)>
func.func @linear_prime_bf16(%A: tensor<4093x4104xbf16>, %W: tensor<4099x4104xbf16>) -> tensor<4093x4099xbf16> {
  %wt_empty = tensor.empty() : tensor<4104x4099xbf16>
  %B = linalg.transpose ins(%W : tensor<4099x4104xbf16>) outs(%wt_empty : tensor<4104x4099xbf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4093x4099xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4093x4099xf32>) -> tensor<4093x4099xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<4093x4104xbf16>, tensor<4104x4099xbf16>) outs(%init : tensor<4093x4099xf32>) -> tensor<4093x4099xf32>
  %out_bf16 = tensor.empty() : tensor<4093x4099xbf16>
  %y = linalg.generic {indexing_maps = [#map_id, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4093x4099xf32>) outs(%out_bf16 : tensor<4093x4099xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4093x4099xbf16>
  return %y : tensor<4093x4099xbf16>
}
