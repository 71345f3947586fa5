// RUN: kforge-opt %s --kforge-normalize-importer --split-input-file | FileCheck %s

// A convolution's zero padding (tensor.pad, as torch-mlir writes nn.Conv2d(padding=1)) becomes a generic that
// computes each padded element: the source's where it lands inside, zero elsewhere, read at an index clamped
// into the source (only along the padded dimensions). The convolution that reads it becomes a generic, into
// which the padding fuses: the convolution reads its unpadded input at the clamped index and selects zero where
// the window leaves it; no padded tensor is materialized, in a kernel or in a thread's window (a pad was left
// on the host: no GPU schedule compiled; a padding fused into the thread tiles filled a private window first).
// CHECK-LABEL: func.func @padded
// CHECK-NOT:   tensor.pad
// CHECK-NOT:   linalg.conv_2d
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK-DAG:     %[[N:.*]] = linalg.index 0
// CHECK-DAG:     %[[OH:.*]] = linalg.index 2
// CHECK-DAG:     %[[C:.*]] = linalg.index 4
// CHECK-DAG:     %[[KH:.*]] = linalg.index 5
// CHECK:         %[[H:.*]] = affine.apply #{{.*}}()[%[[OH]], %[[KH]]]
// CHECK:         arith.subi %[[H]], %c1
// CHECK:         arith.cmpi sge
// CHECK:         arith.minsi
// CHECK:         %[[X:.*]] = tensor.extract %arg0[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : tensor<2x3x8x8xf32>
// CHECK:         %[[V:.*]] = arith.select %{{.*}}, %[[X]], %cst
// CHECK:         arith.mulf %[[V]]
func.func @padded(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c : f32
  } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}

// -----

// A transposed convolution's input spread over zeros (insert_slice into a fill, stride 2): the same, an
// element being the source's where its offset position is a multiple of the stride.
// CHECK-LABEL: func.func @spread
// CHECK-NOT:   tensor.insert_slice
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x9x9xf32>)
// CHECK:         arith.remsi %{{.*}}, %c2
// CHECK:         arith.divsi %{{.*}}, %c2
// CHECK:         tensor.extract %arg0[
// CHECK:         arith.select
func.func @spread(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x9x9xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x9x9xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<1x2x9x9xf32>) -> tensor<1x2x9x9xf32>
  %s = tensor.insert_slice %x into %f[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 2, 2] : tensor<1x2x4x4xf32> into tensor<1x2x9x9xf32>
  return %s : tensor<1x2x9x9xf32>
}

// -----

// Left alone: a pad by a value computed at run time (not a constant).
// CHECK-LABEL: func.func @dynamic_value
// CHECK: tensor.pad
func.func @dynamic_value(%x: tensor<4xf32>, %v: f32) -> tensor<6xf32> {
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
