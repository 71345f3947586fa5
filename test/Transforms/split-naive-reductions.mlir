// RUN: kforge-opt %s --kforge-split-naive-reductions --split-input-file | FileCheck %s
//
// Before the naive GPU mapping (one thread per result point), a reduction with few results and one long
// reduced dimension is split into interleaved partials (element k * ratio + t to partial t) and their
// reduction; everything else is left whole.

// A whole-array sum of 2^18 (one result): 256 partials of 1024 elements, at most 32768 threads and at least
// 1024 elements a chunk.
// CHECK-LABEL: func.func @total_sum
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1024, 256] : tensor<262144xf32> into tensor<1024x256xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<256xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: arith.addf
func.func @total_sum(%x: tensor<262144xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<262144xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

// A row maximum over 8 rows of 2^17: 8 x 128 partials (1024 threads), each starting from the neutral -inf.
// CHECK-LABEL: func.func @row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: -> tensor<8x128xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @row_max(%x: tensor<8x131072xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.reduce ins(%x : tensor<8x131072xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %r : tensor<8xf32>
}

// -----

// Left whole: enough rows for the GPU already (4096), a short reduction, a prime length (no chunking divides
// it), and a sum whose combiner the split does not recognise (two accumulators: an argmax).
// CHECK-LABEL: func.func @left_whole
// CHECK-NOT: tensor.expand_shape
// CHECK-COUNT-3: linalg.reduce
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-NOT: tensor.expand_shape
func.func @left_whole(%rows: tensor<4096x65536xf32>, %short: tensor<1000xf32>, %prime: tensor<65537xf32>,
                      %i0: tensor<4096xf32>, %s0: tensor<f32>, %p0: tensor<f32>,
                      %v0: tensor<f32>, %k0: tensor<i64>)
    -> (tensor<4096xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i64>) {
  %a = linalg.reduce ins(%rows : tensor<4096x65536xf32>) outs(%i0 : tensor<4096xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %b = linalg.reduce ins(%short : tensor<1000xf32>) outs(%s0 : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c = linalg.reduce ins(%prime : tensor<65537xf32>) outs(%p0 : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %d:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%prime : tensor<65537xf32>) outs(%v0, %k0 : tensor<f32>, tensor<i64>) {
    ^bb0(%in: f32, %best: f32, %at: i64):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %gt = arith.cmpf ogt, %in, %best : f32
      %m = arith.select %gt, %in, %best : f32
      %w = arith.select %gt, %ii, %at : i64
      linalg.yield %m, %w : f32, i64
    } -> (tensor<f32>, tensor<i64>)
  return %a, %b, %c, %d#0, %d#1 : tensor<4096xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i64>
}

// -----

// A long reduction whose body reads its own index (cross entropy's loss gathers each row's logit at its row):
// after upstream's split the index would name the chunk, not the element, so the op stays whole.
// CHECK-LABEL: func.func @reads_its_index
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1
// CHECK-NOT: linalg.generic
#v = affine_map<(d0, d1) -> (d1)>
#one = affine_map<(d0, d1) -> (d0)>
func.func @reads_its_index(%rows: tensor<65536x8xf32>, %target: tensor<65536xindex>, %init: tensor<1xf32>) -> tensor<1xf32> {
  %r = linalg.generic {indexing_maps = [#v, #one], iterator_types = ["parallel", "reduction"]}
      ins(%target : tensor<65536xindex>) outs(%init : tensor<1xf32>) {
  ^bb0(%t: index, %acc: f32):
    %row = linalg.index 1 : index
    %x = tensor.extract %rows[%row, %t] : tensor<65536x8xf32>
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}
