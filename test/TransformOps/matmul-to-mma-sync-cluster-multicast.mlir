// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// cluster_multicast = "b" (issue 34): the 2 x 2 grid's blocks along y (different rows of A, the same columns of
// B) pair up in clusters of 1 x 2, and each block's producer copies one of B's two 64-column atoms into both
// blocks' stage by TMA multicast (mask 0b11), completing on the mbarrier at the same place in each; A's box is
// its own. The full mbarrier still expects the whole stage (32768 bytes); the empty one expects both blocks'
// consumer warps (16). The pair meets at a cluster barrier after the initialisation and at the end of the
// launch. Each consumer warp releases a stage on its own block's empty mbarrier and on the peer's (mapa).
// CHECK-LABEL: func.func @cluster_multicast_b
// CHECK: gpu.launch clusters({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) blocks
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c16_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: llvm.inline_asm has_side_effects "{{.*}}@p mbarrier.arrive.shared.b64 state, [$1];{{.*}}", "r,r,~{memory}"
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32 remote, $1, $2;{{.*}}@p mbarrier.arrive.shared::cluster.b64 _, [remote];{{.*}}", "r,r,r,~{memory}"
// CHECK: } else {
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %{{.*}} :
// CHECK-NOT: multicast_mask
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[%{{[^]]*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.cluster.arrive
// CHECK-NOT: aligned
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.terminator
func.func @cluster_multicast_b(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
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
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, wgmma_in_flight = 1, cluster_multicast = "b"} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Sharing A: the pair spans x (the same rows of A, different columns of B); A's one box (128 rows of 64 of K)
// is copied half by each block (a tensor map of 64-row boxes), B's atoms each block's own.
// CHECK-LABEL: func.func @cluster_multicast_a
// CHECK: call @kforge_tensor_map_2d({{.*}}, %c64_i64{{.*}}, %c64_i64{{.*}}, %c2_i64{{.*}})
// CHECK: gpu.launch clusters({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) blocks
// CHECK-COUNT-1: multicast_mask
func.func @cluster_multicast_a(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
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
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, wgmma_in_flight = 1, cluster_multicast = "a"} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A pair needs an even number of blocks along its dimension.
func.func @odd_grid(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c288 = arith.constant 288 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
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
        // expected-error @below {{cluster_multicast launches clusters of two blocks along y: the grid's size there must be static and even}}
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, warp_specialized, wgmma_in_flight = 1, cluster_multicast = "b"} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// cluster_multicast needs the producer warp's loop (warp_specialized).
func.func @no_producer(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
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
        // expected-error @below {{cluster_multicast names the operand a pair of blocks shares ("a" or "b"), with warp_specialized and without persistent_blocks}}
        transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 4, wgmma, tma, wgmma_in_flight = 1, cluster_multicast = "b"} : (!transform.any_op) -> ()
    transform.yield
  }
}
