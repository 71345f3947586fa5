// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// warp_specialized (issue 34): the block is the 8 consumer warps of the 8 x 1 grid and one producer warp (288
// threads). Thread 0 initialises a full mbarrier (one arrival: the producer's expect_tx) and an empty one (one
// arrival per consumer warp: 8) per stage; the block meets once. The consumers (thread < 256) wait on tile t's
// full mbarrier (parity (t / 4) % 2), multiply, and lane 0 of each warp arrives on tile t - 1's empty mbarrier
// once its wgmma finished (wgmma_in_flight = 1: from t = 1); then the epilogue, theirs alone. The producer's
// first thread (256) waits on stage t % 4's empty mbarrier (parity (t / 4 + 1) % 2: a fresh mbarrier's
// preceding phase counts as complete, so the first round passes) and issues the tile's copies. No block
// barrier in either loop.
// CHECK-DAG: #[[$FULL:.*]] = affine_map<(d0) -> ((d0 floordiv 4) mod 2)>
// CHECK-DAG: #[[$PREV:.*]] = affine_map<(d0) -> ((d0 - 1) mod 4)>
// CHECK-DAG: #[[$EMPTY:.*]] = affine_map<(d0) -> ((d0 floordiv 4 + 1) mod 2)>
// CHECK-LABEL: func.func @warp_specialized
// CHECK: call @kforge_tensor_map_2d
// CHECK: call @kforge_tensor_map_2d
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c288,
// CHECK: memref.view {{.*}} to memref<8xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %thread_id_x, %c256
// CHECK: scf.if %[[CONSUMER]] {
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %c4 step
// CHECK: affine.apply #[[$FULL]](%[[T]])
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: arith.cmpi sge, %[[T]], %c1
// CHECK: scf.if
// CHECK: affine.apply #[[$PREV]](%[[T]])
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: vector.store
// CHECK: } else {
// CHECK: %[[PRODUCER:.*]] = arith.cmpi eq, %thread_id_x, %c256
// CHECK: scf.if %[[PRODUCER]] {
// CHECK: scf.for %[[U:.*]] = %{{.*}} to %c4 step
// CHECK: affine.apply #[[$EMPTY]](%[[U]])
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
func.func @warp_specialized(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c288 = arith.constant 288 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c288, %sy = %c1, %sz = %c1) {
    %row = affine.apply affine_map<(d) -> (d * 128)>(%by)
    %col = affine.apply affine_map<(d) -> (d * 128)>(%bx)
    %at = memref.subview %a[%row, 0] [128, 256] [1, 1] : memref<256x256xbf16> to memref<128x256xbf16, strided<[256, 1], offset: ?>>
    %bt = memref.subview %b[0, %col] [256, 128] [1, 1] : memref<256x256xbf16> to memref<256x128xbf16, strided<[256, 1], offset: ?>>
    %ot = memref.subview %out[%row, %col] [128, 128] [1, 1] : memref<256x256xbf16> to memref<128x128xbf16, strided<[256, 1], offset: ?>>
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%at, %bt : memref<128x256xbf16, strided<[256, 1], offset: ?>>, memref<256x128xbf16, strided<[256, 1], offset: ?>>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<128x128xf32>) outs(%ot : memref<128x128xbf16, strided<[256, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
    }
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, wgmma_in_flight = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// With stage_epilogue the consumers meet without the producer warp: named barrier 1 over their 256 threads,
// before their pairs go into the shared tile and before the tile's rows go out.
// CHECK-LABEL: func.func @warp_specialized_stage_epilogue
// CHECK: gpu.barrier
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK-NOT: gpu.barrier
// CHECK: } else {
func.func @warp_specialized_stage_epilogue(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c288 = arith.constant 288 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c288, %sy = %c1, %sz = %c1) {
    %row = affine.apply affine_map<(d) -> (d * 128)>(%by)
    %col = affine.apply affine_map<(d) -> (d * 128)>(%bx)
    %at = memref.subview %a[%row, 0] [128, 256] [1, 1] : memref<256x256xbf16> to memref<128x256xbf16, strided<[256, 1], offset: ?>>
    %bt = memref.subview %b[0, %col] [256, 128] [1, 1] : memref<256x256xbf16> to memref<256x128xbf16, strided<[256, 1], offset: ?>>
    %ot = memref.subview %out[%row, %col] [128, 128] [1, 1] : memref<256x256xbf16> to memref<128x128xbf16, strided<[256, 1], offset: ?>>
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%at, %bt : memref<128x256xbf16, strided<[256, 1], offset: ?>>, memref<256x128xbf16, strided<[256, 1], offset: ?>>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<128x128xf32>) outs(%ot : memref<128x128xbf16, strided<[256, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
    }
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, wgmma_in_flight = 1, stage_epilogue} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A launch of the grid's threads alone has no producer warp.
func.func @no_producer_warp(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %row = affine.apply affine_map<(d) -> (d * 128)>(%by)
    %col = affine.apply affine_map<(d) -> (d * 128)>(%bx)
    %at = memref.subview %a[%row, 0] [128, 256] [1, 1] : memref<256x256xbf16> to memref<128x256xbf16, strided<[256, 1], offset: ?>>
    %bt = memref.subview %b[0, %col] [256, 128] [1, 1] : memref<256x256xbf16> to memref<256x128xbf16, strided<[256, 1], offset: ?>>
    %ot = memref.subview %out[%row, %col] [128, 128] [1, 1] : memref<256x256xbf16> to memref<128x128xbf16, strided<[256, 1], offset: ?>>
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%at, %bt : memref<128x256xbf16, strided<[256, 1], offset: ?>>, memref<256x128xbf16, strided<[256, 1], offset: ?>>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<128x128xf32>) outs(%ot : memref<128x128xbf16, strided<[256, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
    }
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{a staged matmul must be in a gpu.launch of 288x1x1 threads (32 per warp of the grid, and a producer warp)}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @warp_specialized_without_tma(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c288 = arith.constant 288 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c288, %sy = %c1, %sz = %c1) {
    %row = affine.apply affine_map<(d) -> (d * 128)>(%by)
    %col = affine.apply affine_map<(d) -> (d * 128)>(%bx)
    %at = memref.subview %a[%row, 0] [128, 256] [1, 1] : memref<256x256xbf16> to memref<128x256xbf16, strided<[256, 1], offset: ?>>
    %bt = memref.subview %b[0, %col] [256, 128] [1, 1] : memref<256x256xbf16> to memref<256x128xbf16, strided<[256, 1], offset: ?>>
    %ot = memref.subview %out[%row, %col] [128, 128] [1, 1] : memref<256x256xbf16> to memref<128x128xbf16, strided<[256, 1], offset: ?>>
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%at, %bt : memref<128x256xbf16, strided<[256, 1], offset: ?>>, memref<256x128xbf16, strided<[256, 1], offset: ?>>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<128x128xf32>) outs(%ot : memref<128x128xbf16, strided<[256, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
    }
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{warp_specialized gives the TMA copies a producer warp of their own: it needs tma}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, warp_specialized} : (!transform.any_op) -> ()
    transform.yield
  }
}
