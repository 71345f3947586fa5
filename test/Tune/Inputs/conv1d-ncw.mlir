// torch-mlir's import of bench/kernelbench/modules/l1_conv1d.py (linalg-on-tensors) at 4 x 8 x 1030, 16 filters:
// an output width (1028) that 32 does not divide.
module {
  func.func @l1_conv1d(%arg0: tensor<4x8x1030xf32>, %arg1: tensor<16x8x3xf32>, %arg2: tensor<16xf32>) -> tensor<4x16x1028xf32> {
    %0 = tensor.empty() : tensor<4x16x1028xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<16xf32>) outs(%0 : tensor<4x16x1028xf32>) dimensions = [0, 2] 
    %1 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%arg0, %arg1 : tensor<4x8x1030xf32>, tensor<16x8x3xf32>) outs(%broadcasted : tensor<4x16x1028xf32>) -> tensor<4x16x1028xf32>
    return %1 : tensor<4x16x1028xf32>
  }
}
