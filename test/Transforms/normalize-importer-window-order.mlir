// RUN: kforge-opt %s --kforge-normalize-importer --split-input-file --mlir-print-local-scope | FileCheck %s

// linalg's NCHW depthwise convolution iterates (n, oh, ow, c) and stores (n, c, oh, ow): it becomes a generic
// whose parallel loops are in its output's order (n, c, oh, ow), the window loops after them, so that a GPU
// tile's innermost (x) loop is the output's contiguous one. Its input and filter maps follow the loops.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%arg0, %arg1 : tensor<2x3x10x10xf32>, tensor<3x3x3xf32>)
func.func @depthwise(%x: tensor<2x3x10x10xf32>, %w: tensor<3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x8x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xf32>, tensor<3x3x3xf32>) outs(%f : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %r : tensor<2x3x8x8xf32>
}

// -----

// The same with its padding fused (a gathered window op): the loop positions the gather reads follow the
// reorder (n = loop 0, c = loop 1, the rows from loops 2 and 4, the columns from loops 3 and 5).
// CHECK-LABEL: func.func @depthwise_padded
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]
// CHECK-DAG: %[[N:.*]] = linalg.index 0
// CHECK-DAG: %[[C:.*]] = linalg.index 1
// CHECK-DAG: %[[OH:.*]] = linalg.index 2
// CHECK-DAG: %[[KH:.*]] = linalg.index 4
// CHECK: affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%[[OH]], %[[KH]]]
// CHECK: tensor.extract %arg0[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : tensor<2x3x8x8xf32>
func.func @depthwise_padded(%x: tensor<2x3x8x8xf32>, %w: tensor<3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c : f32
  } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
  %e = tensor.empty() : tensor<2x3x8x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x3x10x10xf32>, tensor<3x3x3xf32>) outs(%f : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %r : tensor<2x3x8x8xf32>
}

// -----

// Window ops whose loops are in their output's order already stay as they are: NHWC's depthwise convolution
// and NCHW's pooling.
// CHECK-LABEL: func.func @in_order
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: linalg.pooling_nchw_sum
func.func @in_order(%x: tensor<2x10x10x3xf32>, %w: tensor<3x3x3xf32>, %y: tensor<2x3x10x10xf32>) -> (tensor<2x8x8x3xf32>, tensor<2x3x8x8xf32>) {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x3xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x10x10x3xf32>, tensor<3x3x3xf32>) outs(%f : tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %e2 = tensor.empty() : tensor<2x3x8x8xf32>
  %f2 = linalg.fill ins(%c : f32) outs(%e2 : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %k : tensor<2x3x10x10xf32>, tensor<3x3xf32>) outs(%f2 : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %r, %s : tensor<2x8x8x3xf32>, tensor<2x3x8x8xf32>
}
