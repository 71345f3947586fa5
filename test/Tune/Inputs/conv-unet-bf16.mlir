// conv_unet_3x3_bf16 of bench/tasks (8 images of 128 channels, 128 x 128, 3x3, padding 1), as torch-mlir writes a bf16 nn.Conv2d.
#map_id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @conv_unet_3x3_bf16(%X: tensor<8x128x128x128xbf16>, %W: tensor<128x128x3x3xbf16>) -> tensor<8x128x128x128xbf16> {
  %zero = arith.constant 0.0 : f32
  %pad_value = arith.constant 0.0 : bf16
  %padded = tensor.pad %X low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pad_value : bf16
  } : tensor<8x128x128x128xbf16> to tensor<8x128x130x130xbf16>
  %empty = tensor.empty() : tensor<8x128x128x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x128x128x128xf32>) -> tensor<8x128x128x128xf32>
  %acc = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %W : tensor<8x128x130x130xbf16>, tensor<128x128x3x3xbf16>) outs(%init : tensor<8x128x128x128xf32>) -> tensor<8x128x128x128xf32>
  %out_bf16 = tensor.empty() : tensor<8x128x128x128xbf16>
  %y = linalg.generic {indexing_maps = [#map_id, #map_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : tensor<8x128x128x128xf32>) outs(%out_bf16 : tensor<8x128x128x128xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<8x128x128x128xbf16>
  return %y : tensor<8x128x128x128xbf16>
}
