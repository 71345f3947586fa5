// conv_pointwise of bench/tasks in bf16 (32 images, 256 channels to 64, 56 x 56, 1x1), as torch-mlir writes it.
#map_id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @conv_pointwise_bf16(%X: tensor<32x256x56x56xbf16>, %W: tensor<64x256x1x1xbf16>) -> tensor<32x64x56x56xbf16> {
  %zero = arith.constant 0.0 : f32
  %pad_value = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<32x64x56x56xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32>
  %acc = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%X, %W : tensor<32x256x56x56xbf16>, tensor<64x256x1x1xbf16>) outs(%init : tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32>
  %out_bf16 = tensor.empty() : tensor<32x64x56x56xbf16>
  %y = linalg.generic {indexing_maps = [#map_id, #map_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : tensor<32x64x56x56xf32>) outs(%out_bf16 : tensor<32x64x56x56xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<32x64x56x56xbf16>
  return %y : tensor<32x64x56x56xbf16>
}
