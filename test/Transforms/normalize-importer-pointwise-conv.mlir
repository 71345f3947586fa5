// RUN: kforge-opt %s --kforge-normalize-importer --split-input-file | FileCheck %s
// RUN: kforge-opt %s --kforge-normalize-importer="results-in-place=true" --split-input-file \
// RUN:   | FileCheck %s --check-prefix=INPLACE

// A 1x1 convolution with stride 1 is a contraction over its input channels (issue 35: a pointwise convolution
// as the gemm it is, for the contraction paths). NCHW, as torch-mlir writes it (the bias broadcast as the
// init): the window loops are dropped, the pixels merged, and the filter (F x C) times each image (C x H*W)
// is a batch_matmul reading the filter broadcast along the batch.
// CHECK-DAG: #[[$FILTER:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[$IMAGE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @nchw
// CHECK:     %[[BIAS:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>) outs(%{{.*}} : tensor<2x16x49xf32>)
// CHECK-DAG: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x12x1x1xf32> into tensor<16x12xf32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x12x7x7xf32> into tensor<2x12x49xf32>
// CHECK:     %[[Y:.*]] = linalg.batch_matmul indexing_maps = [#[[$FILTER]], #[[$IMAGE]], #[[$OUT]]] ins(%[[W]], %[[X]] : tensor<16x12xf32>, tensor<2x12x49xf32>) outs(%[[BIAS]] : tensor<2x16x49xf32>)
// CHECK:     tensor.expand_shape %[[Y]] {{\[}}[0], [1], [2, 3]]
// CHECK-NOT: linalg.conv
// The bias broadcast writes the returned buffer through a view (it never reads its init), so the result is
// computed in place, not copied after the kernel.
// INPLACE-LABEL: func.func @nchw
// INPLACE:     %[[EMPTY:.*]] = tensor.empty() : tensor<2x16x7x7xf32>
// INPLACE:     %[[VIEW:.*]] = tensor.collapse_shape %[[EMPTY]] {{\[}}[0], [1], [2, 3]]
// INPLACE:     linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>) outs(%[[VIEW]] : tensor<2x16x49xf32>)
func.func @nchw(%x: tensor<2x12x7x7xf32>, %w: tensor<16x12x1x1xf32>, %bias: tensor<16xf32>) -> tensor<2x16x7x7xf32> {
  %e = tensor.empty() : tensor<2x16x7x7xf32>
  %b = linalg.broadcast ins(%bias : tensor<16xf32>) outs(%e : tensor<2x16x7x7xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x12x7x7xf32>, tensor<16x12x1x1xf32>) outs(%b : tensor<2x16x7x7xf32>) -> tensor<2x16x7x7xf32>
  return %y : tensor<2x16x7x7xf32>
}

// -----

// NHWC: the pixels of every image are one M loop; a plain matmul of (N*H*W) x C by C x F.
// CHECK-LABEL: func.func @nhwc
// CHECK-DAG: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1, 2], [3]] : tensor<1x1x12x16xf32> into tensor<12x16xf32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<2x7x7x12xf32> into tensor<98x12xf32>
// CHECK:     linalg.matmul ins(%[[X]], %[[W]] : tensor<98x12xf32>, tensor<12x16xf32>)
// CHECK-NOT: linalg.conv
func.func @nhwc(%x: tensor<2x7x7x12xf32>, %w: tensor<1x1x12x16xf32>) -> tensor<2x7x7x16xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x7x7x16xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x7x7x16xf32>) -> tensor<2x7x7x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x7x7x12xf32>, tensor<1x1x12x16xf32>) outs(%f : tensor<2x7x7x16xf32>) -> tensor<2x7x7x16xf32>
  return %y : tensor<2x7x7x16xf32>
}

// -----

// Left convolutions: a strided 1x1 (its pixels are not one loop of the input) and a 3x3 window.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func @window
// CHECK: linalg.conv_2d_nchw_fchw
func.func @strided(%x: tensor<2x12x8x8xf32>, %w: tensor<16x12x1x1xf32>) -> tensor<2x16x4x4xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x4x4xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<2x12x8x8xf32>, tensor<16x12x1x1xf32>) outs(%f : tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  return %y : tensor<2x16x4x4xf32>
}
func.func @window(%x: tensor<2x12x9x9xf32>, %w: tensor<16x12x3x3xf32>) -> tensor<2x16x7x7xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x7x7xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x16x7x7xf32>) -> tensor<2x16x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x12x9x9xf32>, tensor<16x12x3x3xf32>) outs(%f : tensor<2x16x7x7xf32>) -> tensor<2x16x7x7xf32>
  return %y : tensor<2x16x7x7xf32>
}

// -----

// torch.matmul of a batch by one matrix written as a generic, the batch operand first: the inputs are swapped
// into the named op's order (A holds the rows), the matrix read broadcast.
// CHECK-LABEL: func.func @batch_times_matrix
// CHECK: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg1, %arg0 : tensor<16x12xf32>, tensor<4x12x49xf32>)
#image = affine_map<(b, m, n, k) -> (b, k, n)>
#filter = affine_map<(b, m, n, k) -> (m, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batch_times_matrix(%x: tensor<4x12x49xf32>, %w: tensor<16x12xf32>) -> tensor<4x16x49xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x49xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x16x49xf32>) -> tensor<4x16x49xf32>
  %y = linalg.generic {indexing_maps = [#image, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x12x49xf32>, tensor<16x12xf32>) outs(%f : tensor<4x16x49xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16x49xf32>
  return %y : tensor<4x16x49xf32>
}
