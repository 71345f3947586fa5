// RUN: kforge-opt %s -split-input-file --kforge-normalize-importer -transform-interpreter -canonicalize | FileCheck %s
// transform.kforge.implicit_gemm_to_simt_staged on a block's convolution, after the tiling, bufferization and GPU
// mapping a kforge-tune schedule renders (test/Tune/implicit-gemm.test renders them); the GPU runs of both paths
// are in docs/perf/conv-h200.md.

// nn.Conv2d(8, 32, 3, padding=1) + ReLU as torch-mlir writes it (kforge-normalize-importer makes the padded
// convolution one generic that reads its input through a guarded gather), as blocks of 32 filters x 2 rows of
// 16 outputs, 8 x 8 threads: the GEMM is 32 x 32 with K = 8 x 3 x 3 = 72, 9 tiles of 8, copied by cp.async.
func.func @conv_relu(%x: tensor<2x8x16x16xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x8x16x16xf32> to tensor<2x8x18x18xf32>
  %empty = tensor.empty() : tensor<2x32x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x8x18x18xf32>, tensor<32x8x3x3xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<2x32x16x16xf32>) outs(%empty : tensor<2x32x16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x32x16x16xf32>
  return %relu : tensor<2x32x16x16xf32>
}

// CHECK-LABEL: func.func @conv_relu
// Two stages of A (block_k x 32 filters) and B (block_k x 32 points), rows padded by 4.
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c64{{.*}}) workgroup({{.*}} : memref<2x8x36xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<2x8x36xf32, #gpu.address_space<workgroup>>)
// The first tile: each thread's 4 filter elements (always read), then its 4 input elements (padded reads: a
// source size of 0 or 1 element), asynchronously.
// CHECK-COUNT-4: nvgpu.device_async_copy %arg1[{{.*}}], {{.*}}, 1 : memref<32x8x3x3xf32>
// CHECK-COUNT-4: nvgpu.device_async_copy %arg0[{{.*}}], {{.*}}, 1, %{{.*}} : memref<2x8x16x16xf32>
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait
// CHECK: gpu.barrier
// K = 8 x 3 x 3 = 72: 9 tiles of 8, 16 accumulators per thread.
// CHECK: scf.for {{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-COUNT-128: math.fma
// CHECK: nvgpu.device_async_wait
// CHECK: gpu.barrier
// CHECK: scf.yield
// The ReLU on the accumulators, stored 4 points of a row at a time; no linalg op is left.
// CHECK-COUNT-4: arith.maximumf
// CHECK: vector.store
// CHECK-COUNT-4: arith.maximumf
// CHECK: vector.store
// CHECK-COUNT-4: arith.maximumf
// CHECK: vector.store
// CHECK-COUNT-4: arith.maximumf
// CHECK: vector.store
// CHECK-NOT: linalg.
// CHECK: gpu.terminator


module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    %conv = transform.structured.match ops{["linalg.generic"]} attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>, #linalg.iterator_type<reduction>, #linalg.iterator_type<reduction>]} in %func : (!transform.any_op) -> !transform.any_op
    transform.annotate %conv "kforge.implicit_gemm" : !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %func : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %root tile_sizes [1, 0, 2]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %func : (!transform.any_op) -> !transform.any_op
    %c2, %l2 = transform.structured.fuse_into_containing_op %conv into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f2, %l3 = transform.structured.fuse_into_containing_op %fill into %l2 : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : (!transform.any_op) -> !transform.any_op
    %bfunc = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %bfunc generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [64, 1, 1] : (!transform.any_op) -> !transform.any_op
    %mfunc = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %mfunc : !transform.any_op
    transform.apply_patterns to %mfunc {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %block_conv = transform.structured.match attributes{kforge.implicit_gemm} in %mfunc : (!transform.any_op) -> !transform.any_op
    transform.kforge.implicit_gemm_to_simt_staged %block_conv {block_k = 8, thread_grid = array<i64: 8, 8>, async_copies} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// The same convolution, its copies one element a thread (copy_order = "contiguous"): consecutive threads along
// each side's contiguous loop, the filter's K (in the op's order: c, kh, kw, f * 72 + k in memory) and the
// input's output points (a row).
// A's element of thread t: K position t mod 8 of the tile, filter t floordiv 8 (+ 8, 16, 24: 4 rounds of 64).
// CHECK-DAG: #[[$AK:.*]] = affine_map<()[s0] -> (s0 mod 8)>
// CHECK-DAG: #[[$AM:.*]] = affine_map<()[s0] -> (s0 floordiv 8)>
// B's: point t mod 32, K position t floordiv 32 (+ 2, 4, 6).
// CHECK-DAG: #[[$BN:.*]] = affine_map<()[s0] -> (s0 mod 32)>
// CHECK-DAG: #[[$BK:.*]] = affine_map<()[s0] -> (s0 floordiv 32)>
func.func @conv_relu_contiguous(%x: tensor<2x8x16x16xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x8x16x16xf32> to tensor<2x8x18x18xf32>
  %empty = tensor.empty() : tensor<2x32x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x8x18x18xf32>, tensor<32x8x3x3xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<2x32x16x16xf32>) outs(%empty : tensor<2x32x16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x32x16x16xf32>
  return %relu : tensor<2x32x16x16xf32>
}

// CHECK-LABEL: func.func @conv_relu_contiguous
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK-DAG: %[[AKV:.*]] = affine.apply #[[$AK]]()[%[[T]]]
// CHECK-DAG: %[[AMV:.*]] = affine.apply #[[$AM]]()[%[[T]]]
// CHECK: nvgpu.device_async_copy %arg1[%[[AMV]], {{.*}}], %{{.*}}[%c0, %[[AKV]], %[[AMV]]], 1 : memref<32x8x3x3xf32>
// CHECK-COUNT-3: nvgpu.device_async_copy %arg1
// CHECK: %[[BNV:.*]] = affine.apply #[[$BN]]()[%[[T]]]
// CHECK: %[[BKV:.*]] = affine.apply #[[$BK]]()[%[[T]]]
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %{{.*}}[%c0, %[[BKV]], %[[BNV]]], 1, %{{.*}} : memref<2x8x16x16xf32>
// CHECK-COUNT-3: nvgpu.device_async_copy %arg0
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} = %c0 to %c9 step %c1
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-COUNT-128: math.fma

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    %conv = transform.structured.match ops{["linalg.generic"]} attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>, #linalg.iterator_type<reduction>, #linalg.iterator_type<reduction>]} in %func : (!transform.any_op) -> !transform.any_op
    transform.annotate %conv "kforge.implicit_gemm" : !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %func : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %root tile_sizes [1, 0, 2]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %func : (!transform.any_op) -> !transform.any_op
    %c2, %l2 = transform.structured.fuse_into_containing_op %conv into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f2, %l3 = transform.structured.fuse_into_containing_op %fill into %l2 : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : (!transform.any_op) -> !transform.any_op
    %bfunc = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %bfunc generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [64, 1, 1] : (!transform.any_op) -> !transform.any_op
    %mfunc = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %mfunc : !transform.any_op
    transform.apply_patterns to %mfunc {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %block_conv = transform.structured.match attributes{kforge.implicit_gemm} in %mfunc : (!transform.any_op) -> !transform.any_op
    transform.kforge.implicit_gemm_to_simt_staged %block_conv {block_k = 8, thread_grid = array<i64: 8, 8>, async_copies, copy_order = "contiguous"} : (!transform.any_op) -> ()
    transform.yield
  }
}


// -----

// A 3x3 NHWC convolution (a named op) into its fill, as blocks of 2 output rows of every image: the images
// (loop 0, left whole by the block tile) are walked serially, one GEMM of 2 x 8 points x 16 filters each, 4 x 4
// threads; K = 3 x 3 x 8 = 72 (the channels innermost), 9 tiles of 8 through registers.
func.func @conv_nhwc(%x: tensor<2x10x10x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<2x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x10x10x8xf32>, tensor<3x3x8x16xf32>) outs(%init : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  return %conv : tensor<2x8x8x16xf32>
}

// CHECK-LABEL: func.func @conv_nhwc
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c16{{.*}}) workgroup({{.*}} : memref<2x8x20xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<2x8x20xf32, #gpu.address_space<workgroup>>)
// The images, one GEMM each; the fill's zero as the accumulators' start; each K tile loaded into registers and
// stored into the other stage after the multiply.
// CHECK: scf.for {{.*}} = %c0 to %c2 step %c1 {
// CHECK: scf.for {{.*}} = %c0 to %c9 step %c1 iter_args({{.*}} = %cst
// CHECK: memref.load %subview[%arg16,
// CHECK-COUNT-128: math.fma
// CHECK: memref.store {{.*}} #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-COUNT-4: vector.store
// CHECK-NOT: linalg.
// CHECK: gpu.terminator

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    %conv = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %func : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %conv tile_sizes [0, 2]
        (mapping = [#gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %func : (!transform.any_op) -> !transform.any_op
    %f2, %l2 = transform.structured.fuse_into_containing_op %fill into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : (!transform.any_op) -> !transform.any_op
    %bfunc = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %bfunc generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [16, 1, 1] : (!transform.any_op) -> !transform.any_op
    %mfunc = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %mfunc : !transform.any_op
    transform.apply_patterns to %mfunc {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %block_conv = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %mfunc : (!transform.any_op) -> !transform.any_op
    transform.kforge.implicit_gemm_to_simt_staged %block_conv {block_k = 8, thread_grid = array<i64: 4, 4>, serial_loops = array<i64: 0>} : (!transform.any_op) -> ()
    transform.yield
  }
}
