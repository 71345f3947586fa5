// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// warp_specialized (issue 34): the block is the 8 consumer warps of the 8 x 1 grid and one producer warp (288
// threads). Thread 0 initialises a full mbarrier (one arrival: the producer's expect_tx) and an empty one (one
// arrival per consumer warp: 8) per stage; the block meets once. The consumers (thread < 256) wait on tile t's
// full mbarrier (parity (t / 4) % 2), multiply, and lane 0 of each warp arrives on tile t - 1's empty mbarrier
// once its wgmma finished (wgmma_in_flight = 1: from t = 1), by a predicated arrive (no branch between the
// wgmma: ptxas would serialize them); then the epilogue, theirs alone. The role is the warp's index as lane 0
// has it (shfl.sync), which ptxas can see is the same across the warp. The producer's
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
// CHECK: %[[WARP:.*]] = nvvm.shfl.sync idx %{{.*}}, %{{.*}}, %c0_i32, %c31_i32
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %[[WARP]], %c8_i32
// CHECK: %[[PRODUCER:.*]] = arith.cmpi eq, %thread_id_x, %c256
// CHECK: scf.if %[[CONSUMER]] {
// CHECK: scf.for %[[T:[^ ]*]] = %{{.*}} to %c4{{.*}} step
// CHECK: affine.apply #[[$FULL]](%[[T]])
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: arith.cmpi sge, %[[T]], %c1
// CHECK: affine.apply #[[$PREV]](%[[T]])
// CHECK: llvm.inline_asm has_side_effects "{{.*}}@p mbarrier.arrive.shared.b64 state, [$1];{{.*}}", "r,r,~{memory}"
// CHECK-NOT: scf.if
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: vector.store
// CHECK: } else {
// CHECK: scf.if %[[PRODUCER]] {
// CHECK: scf.for %[[U:[^ ]*]] = %{{.*}} to %c4{{.*}} step
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

// -----

// persistent_blocks = 3 on the 2 x 2 tiles: a grid of 3 blocks along x; the mbarriers initialised once; the
// launch's body in a loop over tiles b, b + 3 < 4, tile i at block (i % 2, i / 2) (A's rows and C's at
// (i / 2) x 128, B's columns at (i % 2) x 128); round (i - b) / 3 counts the block's tiles, and K tile t of a
// round is the (4 x round + t)-th the block loads: its stage and phases. After a tile's K loop the consumers
// release the tile still in flight (the 3rd of the round), which the producer fills again for the next tile.
// The role branch is outside the loop over tiles: the consumers' loop and the producer's (a copy of the body
// without the other role's code), so that no control flow of the producer's lies between the consumers' wgmma.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0) -> (d0 mod 2)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-DAG: #[[$ROUND:.*]] = affine_map<(d0, d1) -> ((d0 - d1) floordiv 3)>
// CHECK-DAG: #[[$SEQ:.*]] = affine_map<(d0, d1) -> (d1 * 4 + d0)>
// CHECK-LABEL: func.func @persistent
// CHECK: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREE]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1)
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %{{.*}}, %c8_i32
// CHECK: %[[PRODUCER:.*]] = arith.cmpi eq, %thread_id_x, %c256
// CHECK: scf.if %[[CONSUMER]] {
// CHECK: scf.for %[[TILE:[^ ]*]] = %[[BX]] to %c4{{.*}} step %c3
// CHECK: %[[C:.*]] = affine.apply #[[$COL]](%[[TILE]])
// CHECK: %[[R:.*]] = affine.apply #[[$ROW]](%[[TILE]])
// CHECK: %[[ROUNDV:.*]] = affine.apply #[[$ROUND]](%[[TILE]], %[[BX]])
// CHECK: %[[ROWOFF:.*]] = affine.apply #{{.*}}(%[[R]])
// CHECK: memref.subview %arg0[%[[ROWOFF]], 0] [128, 256]
// CHECK: scf.for %[[T:[^ ]*]] = %{{.*}} to %c4{{.*}} step
// CHECK: affine.apply #[[$SEQ]](%[[T]], %[[ROUNDV]])
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: affine.apply #[[$SEQ]](%c3{{.*}}, %[[ROUNDV]])
// CHECK: llvm.inline_asm has_side_effects "{{.*}}@p mbarrier.arrive.shared.b64 state, [$1];
// CHECK: vector.store
// CHECK: } else {
// CHECK: scf.for %[[TILE2:[^ ]*]] = %[[BX]] to %c4{{.*}} step %c3
// CHECK: %[[ROUND2:.*]] = affine.apply #[[$ROUND]](%[[TILE2]], %[[BX]])
// CHECK: scf.if %[[PRODUCER]] {
// CHECK: scf.for %[[U:[^ ]*]] = %{{.*}} to %c4{{.*}} step
// CHECK: affine.apply #[[$SEQ]](%[[U]], %[[ROUND2]])
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: gpu.barrier
// CHECK-NOT: linalg.
// CHECK: gpu.terminator
func.func @persistent(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
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
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, persistent_blocks = 3, wgmma_in_flight = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @persistent_stage_epilogue(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
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
    // expected-error @+1 {{persistent_blocks must be 0, or positive with warp_specialized and without stage_epilogue}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, persistent_blocks = 132, stage_epilogue} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A grid whose size is not static: its tiles cannot be counted.
func.func @persistent_dynamic_grid(%gridy: index, %a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c288 = arith.constant 288 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %gridy, %gz = %c1)
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
    // expected-error @+1 {{persistent_blocks loops over the launch's tiles: its grid must have static sizes along x and y and 1 along z}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, persistent_blocks = 132} : (!transform.any_op) -> ()
    transform.yield
  }
}
