// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics -mlir-print-local-scope | FileCheck %s

// An NCHW convolution with an FCHW filter: the input (x, multiplicand 0) collapsed to [N, C, H*W], transposed
// to [N, H*W, C] and expanded to NHWC; the filter (y) to [F, KH*KW, C] and FHWC. The named op becomes a
// generic reading both copies through permuted maps, its marks kept; its result is unchanged.
// CHECK-LABEL: func.func @nchw_fchw
// CHECK:      %[[XC:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<2x16x8x8xf32> into tensor<2x16x64xf32>
// CHECK:      %[[XT:.*]] = linalg.transpose ins(%[[XC]] : tensor<2x16x64xf32>) outs(%{{.*}} : tensor<2x64x16xf32>) permutation = [0, 2, 1]
// CHECK:      %[[XE:.*]] = tensor.expand_shape %[[XT]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 8, 8, 16] : tensor<2x64x16xf32> into tensor<2x8x8x16xf32>
// CHECK:      %[[WC:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1], [2, 3]] : tensor<32x16x3x3xf32> into tensor<32x16x9xf32>
// CHECK:      %[[WT:.*]] = linalg.transpose ins(%[[WC]] : tensor<32x16x9xf32>) outs(%{{.*}} : tensor<32x9x16xf32>) permutation = [0, 2, 1]
// CHECK:      %[[WE:.*]] = tensor.expand_shape %[[WT]] {{\[\[}}0], [1, 2], [3]] output_shape [32, 3, 3, 16] : tensor<32x9x16xf32> into tensor<32x3x3x16xf32>
// CHECK:      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2 + d5, d3 + d6, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d5, d6, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[XE]], %[[WE]] : tensor<2x8x8x16xf32>, tensor<32x3x3x16xf32>)
// CHECK-SAME: kforge.implicit_gemm
// CHECK-NOT:  linalg.conv_2d_nchw_fchw {dilations
func.func @nchw_fchw(%x: tensor<2x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>, kforge.implicit_gemm}
      ins(%x, %w : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  return %conv : tensor<2x32x6x6xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    %c1, %t0 = transform.kforge.conv_channels_last %c {multiplicand = 0} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %c2, %t1 = transform.kforge.conv_channels_last %c1 {multiplicand = 1} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A padded input fused into the convolution (kforge-normalize-importer's form): the tensor.extract in the body
// reads the copy, its indices permuted (the channel index last); the padding's clamps and select unchanged.
// CHECK-LABEL: func.func @padded_gather
// CHECK:      %[[XT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x8x16xf32>) outs(%{{.*}} : tensor<1x16x8xf32>) permutation = [0, 2, 1]
// CHECK:      %[[XE:.*]] = tensor.expand_shape %[[XT]] {{.*}} into tensor<1x4x4x8xf32>
// CHECK:      linalg.generic
// CHECK:      %[[C:.*]] = linalg.index 4 : index
// CHECK:      %[[H:.*]] = arith.minsi
// CHECK:      %[[W:.*]] = arith.minsi
// CHECK:      tensor.extract %[[XE]][%{{.*}}, %[[H]], %[[W]], %[[C]]] : tensor<1x4x4x8xf32>
// CHECK:      arith.select
func.func @padded_gather(%x: tensor<1x8x4x4xf32>, %w: tensor<4x3x3x8xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %conv = linalg.generic {
      indexing_maps = [affine_map<(n, f, h, w, c, kh, kw) -> (f, kh, kw, c)>, affine_map<(n, f, h, w, c, kh, kw) -> (n, f, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w : tensor<4x3x3x8xf32>) outs(%init : tensor<1x4x4x4xf32>) {
  ^bb0(%y: f32, %acc: f32):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %n = linalg.index 0 : index
    %h = linalg.index 2 : index
    %w_ = linalg.index 3 : index
    %ci = linalg.index 4 : index
    %kh = linalg.index 5 : index
    %kw = linalg.index 6 : index
    %hh = arith.addi %h, %kh : index
    %ww = arith.addi %w_, %kw : index
    %hp = arith.subi %hh, %c1 : index
    %wp = arith.subi %ww, %c1 : index
    %h0 = arith.cmpi sge, %hp, %c0 : index
    %h1 = arith.cmpi sle, %hp, %c3 : index
    %w0 = arith.cmpi sge, %wp, %c0 : index
    %w1 = arith.cmpi sle, %wp, %c3 : index
    %in0 = arith.andi %h0, %h1 : i1
    %in1 = arith.andi %w0, %w1 : i1
    %in = arith.andi %in0, %in1 : i1
    %hc = arith.maxsi %hp, %c0 : index
    %hm = arith.minsi %hc, %c3 : index
    %wc = arith.maxsi %wp, %c0 : index
    %wm = arith.minsi %wc, %c3 : index
    %e = tensor.extract %x[%n, %ci, %hm, %wm] : tensor<1x8x4x4xf32>
    %v = arith.select %in, %e, %zero : f32
    %p = arith.mulf %v, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x4xf32>
  return %conv : tensor<1x4x4x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %c1, %t0 = transform.kforge.conv_channels_last %c {multiplicand = 0} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// An NHWC input has its channels innermost already: a silenceable failure.
func.func @nhwc(%x: tensor<2x8x8x16xf32>, %w: tensor<32x3x3x16xf32>) -> tensor<2x6x6x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x6x6x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  %conv = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x8x8x16xf32>, tensor<32x3x3x16xf32>) outs(%init : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %conv : tensor<2x6x6x32xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.conv_2d_nhwc_fhwc"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.sequence %c : !transform.any_op failures(propagate) {
    ^bb0(%each: !transform.any_op):
      // expected-error @below {{no channels-last copy: multiplicand 0 has its channels innermost already}}
      %c1, %t0 = transform.kforge.conv_channels_last %each {multiplicand = 0} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
}

// -----

// A depthwise convolution has no channel loop (its channels are parallel: both sides and the output read them).
func.func @depthwise(%x: tensor<1x8x6x6xf32>, %w: tensor<8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %conv = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x8x6x6xf32>, tensor<8x3x3xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %conv : tensor<1x8x4x4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.depthwise_conv_2d_nchw_chw"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{no channels-last copy: no reduction loop indexes a whole dimension of both multiplicands (no channel loop)}}
    %c1, %t0 = transform.kforge.conv_channels_last %c {multiplicand = 0} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Only x (0) and y (1) of the body's out + x * y are multiplicands.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{multiplicand is 0 (x of the body's out + x * y) or 1 (y), not 2}}
    %c1, %t0 = transform.kforge.conv_channels_last %c {multiplicand = 2} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// An input computed in the payload (a ReLU before the convolution) is not copied: its producer would be left
// between the copy and the kernels (next case). The filter still is.
// CHECK-LABEL: func.func @computed_input
// CHECK:      linalg.transpose ins(%{{.*}} : tensor<32x16x9xf32>)
// CHECK:      linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x16x8x8xf32>, tensor<32x3x3x16xf32>)
func.func @computed_input(%x: tensor<2x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.empty() : tensor<2x16x8x8xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x16x8x8xf32>) outs(%xe : tensor<2x16x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x16x8x8xf32>
  %empty = tensor.empty() : tensor<2x32x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%relu, %w : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  return %conv : tensor<2x32x6x6xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    %c1, %t1 = transform.kforge.conv_channels_last %c {multiplicand = 1} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

func.func @computed_input_refused(%x: tensor<2x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.empty() : tensor<2x16x8x8xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x16x8x8xf32>) outs(%xe : tensor<2x16x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x16x8x8xf32>
  %empty = tensor.empty() : tensor<2x32x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%relu, %w : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  return %conv : tensor<2x32x6x6xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{no channels-last copy: multiplicand 0 is computed in the payload, not a function argument (its producer would be left outside the kernels)}}
    %c1, %t0 = transform.kforge.conv_channels_last %c {multiplicand = 0} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// One channel (a grayscale image): NCHW is NHWC already, nothing to copy.
func.func @one_channel(%x: tensor<1x1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x1x8x8xf32>, tensor<4x1x3x3xf32>) outs(%init : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %conv : tensor<1x4x6x6xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{no channels-last copy: multiplicand 0 has one channel (its layout is channels-last already)}}
    %c1, %t0 = transform.kforge.conv_channels_last %c {multiplicand = 0} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
