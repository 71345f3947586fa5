// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// A warp's 32x32 tile of a bf16 matmul with its fill and a bias + relu + round-to-bf16 epilogue: 2 x 4
// m16n8k16 tiles, a K loop in steps of 16 carrying 32 f32 accumulators, A's pairs read as 32-bit vectors,
// the epilogue applied per accumulator (bias read at the accumulator's column) and stored as bf16 pairs.
// The fill, the matmul, the epilogue and C's buffer are gone.
// CHECK-LABEL: func.func @warp_tile
// CHECK-NOT: memref.alloc
// CHECK: %[[LANE:.*]] = gpu.lane_id
// CHECK: %[[ACC:.*]]:32 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C16:.*]] iter_args
// CHECK: vector.load %{{.*}} : memref<32x64xbf16>, vector<2xbf16>
// CHECK: memref.load %{{.*}} : memref<64x32xbf16>
// CHECK-COUNT-8: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: scf.yield
// CHECK: memref.load %{{.*}} : memref<32xbf16>
// CHECK: arith.maximumf
// CHECK: arith.truncf
// CHECK: vector.store %{{.*}} : memref<32x32xbf16>, vector<2xbf16>
// CHECK-NOT: linalg.
// CHECK: return
func.func @warp_tile(%a: memref<32x64xbf16>, %b: memref<64x32xbf16>, %bias: memref<32xbf16>,
                     %out: memref<32x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  linalg.matmul ins(%a, %b : memref<32x64xbf16>, memref<64x32xbf16>) outs(%c : memref<32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<32x32xf32>, memref<32xbf16>) outs(%out : memref<32x32xbf16>) {
  ^bb0(%x: f32, %bb: bf16, %o: bf16):
    %be = arith.extf %bb : bf16 to f32
    %s = arith.addf %x, %be : f32
    %r = arith.maximumf %s, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// No fill and no epilogue: C (f32, a view with contiguous rows) is read into the accumulators first and
// written back as pairs. Two steps of K per iteration: the loop steps by 32 and multiplies twice per tile.
// CHECK-LABEL: func.func @accumulate_into_c
// CHECK-COUNT-4: memref.load %{{.*}} : memref<16x8xf32, strided<[64, 1], offset: ?>>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK-COUNT-2: vector.store %{{.*}} : memref<16x8xf32, strided<[64, 1], offset: ?>>, vector<2xf32>
func.func @accumulate_into_c(%a: memref<16x64xf16>, %b: memref<64x8xf16>, %c: memref<16x8xf32, strided<[64, 1], offset: ?>>) {
  linalg.matmul ins(%a, %b : memref<16x64xf16>, memref<64x8xf16>) outs(%c : memref<16x8xf32, strided<[64, 1], offset: ?>>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm {k_steps = 2} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @fp32_operands(%a: memref<16x16xf32>, %b: memref<16x8xf32>, %c: memref<16x8xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x8xf32>) outs(%c : memref<16x8xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected bf16 or f16 operands (both the same) and an f32 result}}
    transform.kforge.matmul_to_mma_sync %mm : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @partial_tile(%a: memref<24x16xbf16>, %b: memref<16x8xbf16>, %c: memref<24x8xf32>) {
  linalg.matmul ins(%a, %b : memref<24x16xbf16>, memref<16x8xbf16>) outs(%c : memref<24x8xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected M, N and K multiples of 16, 8 and 16 (the mma.sync m16n8k16 tile; K a multiple of 8 with async_stages), got 24x8x16}}
    transform.kforge.matmul_to_mma_sync %mm : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @k_steps_too_long(%a: memref<16x48xbf16>, %b: memref<48x8xbf16>, %c: memref<16x8xf32>) {
  linalg.matmul ins(%a, %b : memref<16x48xbf16>, memref<48x8xbf16>) outs(%c : memref<16x8xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected K (48) a multiple of 16 x k_steps (2)}}
    transform.kforge.matmul_to_mma_sync %mm {k_steps = 2} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Each lane writes only its own elements of C: an op that then reads all of C (here a copy; not an
// elementwise epilogue it could take in registers) would race with the other lanes.
func.func @c_read_after(%a: memref<16x16xbf16>, %b: memref<16x8xbf16>, %c: memref<16x8xf32>, %d: memref<16x8xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xbf16>, memref<16x8xbf16>) outs(%c : memref<16x8xf32>)
  memref.copy %c, %d : memref<16x8xf32> to memref<16x8xf32>
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{C is used after the matmul by an op that cannot take its values from registers}}
    transform.kforge.matmul_to_mma_sync %mm : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Staged: a block's 128x128 tile over 4 x 2 warps (256 threads) with 32 of K per tile. Two stages of A
// (128 x 32) and of B (32 x 128), rows padded by 8, become workgroup attributions of the launch; both shares
// are copied as 8-element vectors; warps read A's fragments 32 bits at a time and B's element by element
// from a stage; one barrier after the first tile and one per tile in the loop.
// CHECK-LABEL: func.func @block_tile
// CHECK: gpu.launch {{.*}} workgroup(%[[AS:.*]] : memref<2x128x40xbf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<2x32x136xbf16, #gpu.address_space<workgroup>>)
// CHECK: gpu.thread_id x
// CHECK: vector.load %{{.*}} : memref<128x256xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x128x40xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[BS]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x32x136xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: affine.min
// CHECK: vector.load %{{.*}} : memref<128x40xbf16, strided<[40, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: memref.load %{{.*}} : memref<32x136xbf16, strided<[136, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: arith.truncf
// CHECK: vector.store %{{.*}} : memref<128x128xbf16>, vector<2xbf16>
func.func @block_tile(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %out: memref<128x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xbf16>) {
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
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Staged needs its threads: a launch of 128 threads cannot be a 4 x 2 warp grid.
func.func @wrong_block(%a: memref<128x64xbf16>, %b: memref<64x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x64xbf16>, memref<64x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{a staged matmul must be in a gpu.launch of 256x1x1 threads (32 per warp of the grid)}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @too_much_shared(%a: memref<512x128xbf16>, %b: memref<128x512xbf16>, %c: memref<512x512xf32>) {
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c512, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<512x128xbf16>, memref<128x512xbf16>) outs(%c : memref<512x512xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{two stages of A and B take 280576 bytes of shared memory; a block has at most 232448}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 4, 4>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Two stages above 48 KB (64 of K per tile: 71680 bytes) are views of the launch's dynamic shared memory,
// 128-byte aligned, its size set on the launch.
// CHECK-LABEL: func.func @dynamic_shared
// CHECK: %[[SIZE:.*]] = arith.constant 71680 : i32
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
// CHECK-NOT: workgroup(
// CHECK: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[BASE]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x128x72xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[C36864:.*]] = arith.constant 36864 : index
// CHECK: memref.view %[[BASE]][%[[C36864]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x136xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-64: nvvm.mma.sync
func.func @dynamic_shared(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 4, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @grid_cuts_tiles(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the warp grid 8x1 does not cut the 64x64 tile into warp tiles of whole 16x8 instruction tiles}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 8, 1>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Staged with ldmatrix: per step of 16 along K, one x4 ldmatrix per 16 rows of the warp's A (2) and one,
// transposed, per 16 columns of its B (4); no other fragment loads.
// CHECK-LABEL: func.func @block_tile_ldmatrix
// CHECK: scf.for
// CHECK-COUNT-2: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x40xbf16, strided<[40, 1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-COUNT-4: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<32x136xbf16, strided<[136, 1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-COUNT-2: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-4: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-NOT: vector.load %{{.*}}#gpu.address_space<workgroup>
// CHECK-NOT: memref.load %{{.*}}#gpu.address_space<workgroup>
// CHECK: gpu.barrier
func.func @block_tile_ldmatrix(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, ldmatrix} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @ldmatrix_unstaged(%a: memref<16x16xbf16>, %b: memref<16x16xbf16>, %c: memref<16x16xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xbf16>, memref<16x16xbf16>) outs(%c : memref<16x16xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{ldmatrix reads shared memory: it needs the staged form (block_k > 0)}}
    transform.kforge.matmul_to_mma_sync %mm {ldmatrix} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// async_stages = 3: three stages (56832 bytes: dynamic shared memory) filled by cp.async (16 bytes, bypassing
// L1), no register prefetch. Before the
// loop tiles 0 and 1 are issued (4 copies each per thread: 2 of A's vectors and 2 of B's), one group per tile;
// each iteration waits until at most one group is pending (tile t has landed), meets at a barrier, issues tile
// t + 2 into stage (t + 2) % 3 and multiplies stage t % 3; after the loop every copy is waited for.
// CHECK-LABEL: func.func @block_tile_async
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: %[[AS:.*]] = memref.view {{.*}} to memref<3x128x40xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.*]] = memref.view {{.*}} to memref<3x32x136xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: nvgpu.device_async_copy %{{.*}}, %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<128x256xbf16> to memref<3x128x40xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: nvgpu.device_async_copy %{{.*}}, %[[BS]][%{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<256x128xbf16> to memref<3x32x136xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[G0:.*]] = nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: %[[G1:.*]] = nvgpu.device_async_create_group
// CHECK-NOT: vector.store
// CHECK: scf.for
// CHECK-NEXT: nvgpu.device_async_wait %[[G1]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: affine.min
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.ldmatrix
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %[[G1]] {numGroups = 0 : i32}
func.func @block_tile_async(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, ldmatrix, async_stages = 3} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// K = 40, not a multiple of block_k = 32: the last tile's vectors past K are zero-filled (cp.async with a
// source size of 0 bytes). Their source addresses are clamped inside K: an A vector's first column to K - 8 = 32
// (it spans 8 columns), a B vector's row to the last row, K - 1 = 39 (a row clamped to K - 8 would read row 32
// in place of rows 33 .. 39, which are inside K).
// (The maps are printed before the function.)
// CHECK-DAG: #[[$ACOL:.*]] = affine_map<()[s0, s1] -> (s0 + s1, 32)>
// CHECK-DAG: #[[$BROW:.*]] = affine_map<()[s0, s1] -> (s0 + s1, 39)>
// CHECK-LABEL: func.func @async_partial_k
// CHECK: scf.for
// CHECK: affine.min #[[$ACOL]]
// CHECK: nvgpu.device_async_copy {{.*}} : memref<128x40xbf16> to
// CHECK: affine.min #[[$BROW]]
// CHECK: nvgpu.device_async_copy {{.*}} : memref<40x128xbf16> to
func.func @async_partial_k(%a: memref<128x40xbf16>, %b: memref<40x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x40xbf16>, memref<40x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, async_stages = 2} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A partial block tile (the last 100 of 997 rows: C's rows an affine.min bounded by 128) staged through
// registers: its loads past the edge would be unguarded, so only the asynchronous stages (zero-filled copies)
// take it.
func.func @partial_block_register_stages(%a: memref<997x64xbf16>, %b: memref<64x128xbf16>, %c: memref<997x128xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %row = affine.apply affine_map<()[s0] -> (s0 * 128)>()[%bx]
    %rows = affine.min affine_map<()[s0] -> (s0 * -128 + 997, 128)>()[%bx]
    %at = memref.subview %a[%row, 0] [%rows, 64] [1, 1] : memref<997x64xbf16> to memref<?x64xbf16, strided<[64, 1], offset: ?>>
    %ct = memref.subview %c[%row, 0] [%rows, 128] [1, 1] : memref<997x128xf32> to memref<?x128xf32, strided<[128, 1], offset: ?>>
    linalg.matmul ins(%at, %b : memref<?x64xbf16, strided<[64, 1], offset: ?>>, memref<64x128xbf16>) outs(%ct : memref<?x128xf32, strided<[128, 1], offset: ?>>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{a partial tile (M or N past the edge of the matmul) needs the staged, asynchronous form (block_k and async_stages: its copies zero-fill past the edge)}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// The same partial tile with async stages: each copy of A reads 8 elements within the tile's rows and 0 past
// them, from a row clamped to the last; the results are stored behind their row's check.
// CHECK-LABEL: func.func @partial_block_async
// CHECK: %[[ROWS:.*]] = affine.min
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[ROWS]] : index
// CHECK: %[[SIZE:.*]] = arith.select %[[IN]], %c8{{.*}}, %c0{{.*}} : index
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %[[SIZE]] {bypassL1}
// CHECK: nvvm.mma.sync
// CHECK: arith.cmpi slt, %{{.*}}, %[[ROWS]] : index
// CHECK: scf.if
// CHECK: vector.store
func.func @partial_block_async(%a: memref<997x64xbf16>, %b: memref<64x128xbf16>, %c: memref<997x128xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %row = affine.apply affine_map<()[s0] -> (s0 * 128)>()[%bx]
    %rows = affine.min affine_map<()[s0] -> (s0 * -128 + 997, 128)>()[%bx]
    %at = memref.subview %a[%row, 0] [%rows, 64] [1, 1] : memref<997x64xbf16> to memref<?x64xbf16, strided<[64, 1], offset: ?>>
    %ct = memref.subview %c[%row, 0] [%rows, 128] [1, 1] : memref<997x128xf32> to memref<?x128xf32, strided<[128, 1], offset: ?>>
    linalg.matmul ins(%at, %b : memref<?x64xbf16, strided<[64, 1], offset: ?>>, memref<64x128xbf16>) outs(%ct : memref<?x128xf32, strided<[128, 1], offset: ?>>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, async_stages = 2} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @async_one_stage(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{async_stages (1) must be 0, or at least 2 stages of a staged matmul (block_k > 0)}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, async_stages = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @async_unstaged(%a: memref<16x16xbf16>, %b: memref<16x16xbf16>, %c: memref<16x16xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xbf16>, memref<16x16xbf16>) outs(%c : memref<16x16xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{async_stages (3) must be 0, or at least 2 stages of a staged matmul (block_k > 0)}}
    transform.kforge.matmul_to_mma_sync %mm {async_stages = 3} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A's rows 260 elements apart: row 1 starts 520 bytes in, not on a 16-byte copy.
func.func @async_misaligned_rows(%a: memref<128x256xbf16, strided<[260, 1]>>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16, strided<[260, 1]>>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{async_stages copies 16 bytes at a time: A's and B's rows must start on whole 8-element copies (a static leading stride that is a multiple of 8)}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, async_stages = 3} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// wgmma: a 128x128 tile over two warpgroups (8 warps stacked, 16 rows each), three stages of 64 of K in
// 1024-byte aligned dynamic shared memory, 128-byte swizzled: A 128 x 64 (K-major), B as two 64-column atoms
// of 64 K rows (N-major). The copies' 16-byte chunks land at chunk ^ (row % 8); before the barrier the copies
// are fenced for the async proxy; each tile is 4 wgmma m64n128k16 on shared-memory descriptors (B transposed
// by the instruction: layout row), committed and waited for; the bf16 epilogue is applied to the accumulators.
// CHECK-LABEL: func.func @block_tile_wgmma
// CHECK: %[[SIZE:.*]] = arith.constant 98304 : i32
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[C49152:.*]] = arith.constant 49152 : index
// CHECK: memref.view %{{.*}}[%[[C49152]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: arith.xori
// CHECK: nvgpu.device_async_copy
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: arith.truncf
// CHECK: vector.store %{{.*}} : memref<128x128xbf16>, vector<2xbf16>
func.func @block_tile_wgmma(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %out: memref<128x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xbf16>) {
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
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @wgmma_without_async(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma needs async_stages (at least 2), block_k = 64 (one 128-byte swizzled row) and no ldmatrix}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @wgmma_warp_grid(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma needs warp_grid = [4 x warpgroups, 1] over 16 rows per warp (the tile's rows 64 per warpgroup) and the tile's columns a multiple of 64, at most 256; got a 4x2 grid on 128x128}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 4, 2>, async_stages = 3, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// tma: the host builds A's and B's tensor maps before the launch (boxes of 128 x 64 and 64 x 64 elements);
// thread 0 initialises the three stages' mbarriers (after the 96 KB of stages) and, for each tile, tells its
// stage's mbarrier 32 KB and issues one bulk tensor copy of A's box and one per 64-column atom of B, at the
// block's row and column (innermost coordinate first); the K loop waits on the mbarrier's phase parity.
// CHECK-LABEL: func.func @block_tile_tma
// CHECK: %[[A:.*]] = call @kforge_tensor_map_2d(%{{.*}}, %c256_i64{{.*}}, %c256_i64{{.*}}, %c512_i64{{.*}}, %c128_i64{{.*}}, %c64_i64{{.*}}, %c2_i64{{.*}})
// CHECK: %[[B:.*]] = call @kforge_tensor_map_2d(%{{.*}}, %c256_i64{{.*}}, %c256_i64{{.*}}, %c512_i64{{.*}}, %c64_i64{{.*}}, %c64_i64{{.*}}, %c2_i64{{.*}})
// CHECK: gpu.launch
// CHECK: memref.view {{.*}} to memref<3xi64, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: llvm.inttoptr %[[A]] : i64 to !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: llvm.inttoptr %[[B]] : i64 to !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.barrier
// CHECK: nvvm.wgmma.mma_async
func.func @block_tile_tma(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %out: memref<256x256xbf16>) {
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
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma, tma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A's rows every other row of its memref: no box of TMA's (a whole 2-D memref, as a block tile that takes every
// row and column leaves it, is one: test/Tune/tma-whole-operand.test).
func.func @tma_strided_subview(%a2: memref<256x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %a = memref.subview %a2[0, 0] [128, 256] [2, 1] : memref<256x256xbf16> to memref<128x256xbf16, strided<[512, 1]>>
    linalg.matmul ins(%a, %b : memref<128x256xbf16, strided<[512, 1]>>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tma copies boxes of global memrefs: expected A and B each a unit-stride 2-D memref.subview}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma, tma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @tma_without_wgmma(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tma fills wgmma's swizzled stages: it needs wgmma}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 3, tma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @in_flight_two_stages(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma_in_flight must be 0, or 1 with wgmma and at least 3 async_stages}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 2, wgmma, wgmma_in_flight = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Irregular: a 5x3 warp grid (480 threads) over an 80x120 tile, K = 1000 in tiles of 64. A's tile (80 x 64:
// 640 vectors) takes two rounds of copies, the second clamped to the tile's last vector (affine.min); K ends
// inside the 16th tile, whose copies past K read a clamped address with a source size of 0 (zero-filled).
// CHECK-LABEL: func.func @irregular
// CHECK: affine.min
// CHECK: arith.cmpi slt
// CHECK: arith.select %{{.*}}, %c8{{.*}}, %c0{{.*}} : index
// CHECK: nvgpu.device_async_copy %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1
// CHECK: nvvm.mma.sync
func.func @irregular(%a: memref<80x1000xbf16>, %b: memref<1000x120xbf16>, %out: memref<80x120xbf16>) {
  %c1 = arith.constant 1 : index
  %c480 = arith.constant 480 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c480, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<80x120xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<80x120xf32>)
    linalg.matmul ins(%a, %b : memref<80x1000xbf16>, memref<1000x120xbf16>) outs(%c : memref<80x120xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<80x120xf32>) outs(%out : memref<80x120xbf16>) {
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
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 5, 3>, async_stages = 3} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @stage_epilogue_static(%a: memref<128x256xbf16>, %b: memref<256x128xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xbf16>, memref<256x128xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // Two register-filled stages of 32 (static shared memory): no room reserved for the result tile.
    // expected-error @+1 {{stage_epilogue needs async stages in dynamic shared memory that hold the result tile}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 4, 2>, stage_epilogue} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// tf32 multiplies on the pipelined stages: without async_stages, and on wgmma with stages of 64 (f32 rows of
// 128 bytes hold 32), the op does not verify.
func.func @tf32_without_wgmma(%a: memref<128x256xf32>, %b: memref<256x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul ins(%a, %b : memref<128x256xf32>, memref<256x128xf32>) outs(%c : memref<128x128xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tf32 multiplies f32 operands on the pipelined stages (wgmma's or mma.sync's): it needs async_stages}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 8, 1>, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @tf32_stages_of_64(%a: memref<128x256xf32>, %b: memref<256x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul ins(%a, %b : memref<128x256xf32>, memref<256x128xf32>) outs(%c : memref<128x128xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma needs async_stages (at least 2), block_k = 32 (one 128-byte swizzled row of f32) and no ldmatrix}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// f32 operands need tf32: without it the tensor cores take only bf16 and f16.
func.func @f32_without_tf32(%a: memref<128x256xf32>, %b: memref<128x256xf32>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : memref<128x256xf32>, memref<128x256xf32>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected bf16 or f16 operands (both the same) and an f32 result (f32 operands need tf32)}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 64, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// TF32 wgmma reads both operands K-major: with tma (boxes copied as they lie) a B stored K x N is refused,
// naming the layout (the cp.async stages transpose it: test/Tune/tf32-transposing-copies.test).
func.func @tf32_b_k_by_n(%a: memref<128x256xf32>, %b: memref<256x128xf32>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<128x256xf32>, memref<256x128xf32>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tf32 on wgmma with tma reads A and B K-major only: expected A as M x K and B as N x K (nn.Linear's weight, x @ W^T); this matmul reads B as K x N: add swap_ab (B's fragments through registers), drop tma (the cp.async stages transpose it), or use mma.sync's TF32 form or the SIMT tiles}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma, tma, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// tf32 takes f32 operands only.
func.func @tf32_on_bf16(%a: memref<128x256xbf16>, %b: memref<128x256xbf16>, %c: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : memref<128x256xbf16>, memref<128x256xbf16>) outs(%c : memref<128x128xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tf32 multiplies f32 operands: expected f32 x f32 -> f32}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 8, 1>, async_stages = 3, wgmma, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}
