// An elementwise init stays with the contraction it initializes: torch-mlir broadcasts nn.Conv2d's bias into the
// convolution's init. Split off, the broadcast was a dispatch of its own and the convolution's dispatch took
// the broadcast tensor as an argument it accumulated into in place (a buffer both read and written, which the
// runner fills with NaN as an output: KernelBench's l2_conv2d_max_pool_relu got no kernel, H100, session 55).
// Now the convolution's dispatch takes the bias and broadcasts it itself; the pooling after it is a dispatch of
// its own (a window op starts one).
// RUN: kforge-opt %s -split-input-file --kforge-partition | FileCheck %s

func.func @conv_bias_pool(%x: tensor<2x4x10x10xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x4x4xf32> {
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %init = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<2x8x8x8xf32>) dimensions = [0, 2, 3]
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%init : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %ninf = arith.constant -3.40282347E+38 : f32
  %pe = tensor.empty() : tensor<2x8x4x4xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%conv, %window : tensor<2x8x8x8xf32>, tensor<2x2xf32>) outs(%pinit : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %pool : tensor<2x8x4x4xf32>
}

// CHECK:      func.func private @[[CONV:k_[0-9a-f]+]](%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<2x4x10x10xf32>, %{{.*}}: tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32>
// CHECK:        linalg.broadcast
// CHECK:        linalg.conv_2d_nchw_fchw
// CHECK:      func.func private @[[POOL:k_[0-9a-f]+]](%{{.*}}: tensor<2x8x8x8xf32>) -> tensor<2x8x4x4xf32>
// CHECK:        linalg.pooling_nchw_max
// CHECK:      func.func @conv_bias_pool(
// CHECK-NEXT:   %[[C:.*]] = call @[[CONV]](
// CHECK-NEXT:   %[[P:.*]] = call @[[POOL]](%[[C]])
// CHECK-NEXT:   return %[[P]]

// -----

// Not when the init's values are read elsewhere too (here the result adds the broadcast again): the broadcast
// is a dispatch of its own, as before (the matmul's dispatch reads its init argument after the matmul, so
// bufferization gives the matmul a buffer of its own).
func.func @init_read_twice(%a: tensor<16x8xf32>, %bm: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %e = tensor.empty() : tensor<16x32xf32>
  %init = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<16x32xf32>) dimensions = [0]
  %mm = linalg.matmul ins(%a, %bm : tensor<16x8xf32>, tensor<8x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  %sum = linalg.add ins(%mm, %init : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %sum : tensor<16x32xf32>
}

// CHECK:      func.func private @[[BCAST:k_[0-9a-f]+]](%{{.*}}: tensor<32xf32>) -> tensor<16x32xf32>
// CHECK:        linalg.broadcast
// CHECK:      func.func private @[[MM:k_[0-9a-f]+]](
// CHECK:        linalg.matmul
// CHECK:      func.func @init_read_twice(
// CHECK-NEXT:   %[[I:.*]] = call @[[BCAST]](
