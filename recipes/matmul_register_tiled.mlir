// RUN: kforge-opt %s
//
// Matmul (and batched matmul) with block tiling, per-thread register tiling and a vectorized K loop.
//   block tile 64x64 outputs, 16x16 threads, each thread 4x4 outputs held in registers, K step 4.
// Fills that initialise the output are fused into the same kernel.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %module
      : (!transform.any_op) -> !transform.any_op
    %fill = transform.structured.match ops{["linalg.fill"]} in %module
      : (!transform.any_op) -> !transform.any_op

    // One 64x64 output tile per block; the fill follows the matmul into the block loop.
    %block_mm, %block_loop = transform.structured.tile_using_forall %matmul tile_sizes [64, 64]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_fill, %block_loop2 = transform.structured.fuse_into_containing_op %fill into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)

    // 4x4 outputs per thread, 16x16 threads.
    %thread_mm, %thread_loop = transform.structured.tile_using_forall %block_mm tile_sizes [4, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_fill, %thread_loop2 = transform.structured.fuse_into_containing_op %block_fill into %thread_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)

    // K loop in steps of 4, then vectorize the 4x4x4 step and the 4x4 fill.
    %k_mm, %k_loop = transform.structured.tile_using_for %thread_mm tile_sizes [0, 0, 4]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %k_mm vector_sizes [4, 4, 4] : !transform.any_op
    transform.structured.vectorize %thread_fill vector_sizes [4, 4] : !transform.any_op

    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func : !transform.any_op

    // Buffers, then the GPU mapping (which needs loops without tensor results).
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func2 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    // Self-copies left by bufferizing the loops fold away; folding subviews lets the hoisting see the C tile.
    transform.apply_patterns to %func2 {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %func2 generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [16, 16, 1] : (!transform.any_op) -> !transform.any_op
    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // Keep the 4x4 accumulator in registers across the K loop.
    %hoisted = transform.structured.hoist_redundant_vector_transfers %func3 : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %hoisted {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %hoisted : !transform.any_op
    transform.yield
  }
}
