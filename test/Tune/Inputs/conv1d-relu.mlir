// torch-mlir's import of bench/kernelbench/modules/l1_conv1d.py (linalg-on-tensors) at 4 x 8 x 1030, 16 filters:
// an output width (1028) that 32 does not divide; then a ReLU (written here, as an importer would).
module {
  func.func @conv1d_relu(%arg0: tensor<4x8x1030xf32>, %arg1: tensor<16x8x3xf32>, %arg2: tensor<16xf32>) -> tensor<4x16x1028xf32> {
    %0 = tensor.empty() : tensor<4x16x1028xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<16xf32>) outs(%0 : tensor<4x16x1028xf32>) dimensions = [0, 2] 
    %1 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%arg0, %arg1 : tensor<4x8x1030xf32>, tensor<16x8x3xf32>) outs(%broadcasted : tensor<4x16x1028xf32>) -> tensor<4x16x1028xf32>
    %2 = tensor.empty() : tensor<4x16x1028xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<4x16x1028xf32>) outs(%2 : tensor<4x16x1028xf32>) {
    ^bb0(%in: f32, %out: f32):
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %in, %zero : f32
      linalg.yield %r : f32
    } -> tensor<4x16x1028xf32>
    return %3 : tensor<4x16x1028xf32>
  }
}
