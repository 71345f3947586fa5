// RUN: kforge-opt %s
//
// Matmul with A and B tiles staged in shared memory: each block computes 64x64 outputs with 16x16 threads
// and walks K in steps of 16. Per step, all 256 threads copy the 64x16 tile of A and the 16x64 tile of B
// into shared memory cooperatively (4 contiguous elements each), synchronise, and each thread accumulates
// its 4x4 outputs from shared memory in steps of 4, then the block synchronises again before the next copy.
// Limit: the accumulator is read and written in global memory at every K step (it cannot be hoisted out
// of the K loop that encloses the thread loop); kforge's own passes address that.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    %fill = transform.get_producer_of_operand %matmul[2] : (!transform.any_op) -> !transform.any_op

    // Block tiles with the fill fused, and the block-level K loop, on tensors.
    %block_mm, %block_loop = transform.structured.tile_using_forall %matmul tile_sizes [64, 64]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_fill, %block_loop2 = transform.structured.fuse_into_containing_op %fill into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_fill, %fill_loop = transform.structured.tile_using_forall %block_fill tile_sizes [4, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %k_mm, %k_loop = transform.structured.tile_using_for %block_mm tile_sizes [0, 0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.annotate %k_mm "kforge.staged" : !transform.any_op
    transform.structured.vectorize %thread_fill : !transform.any_op

    %func0 = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func0 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func0 : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func : !transform.any_op
    // Blocks first: the launch body is then the allocation scope, so promoted buffers are per block.
    %launch = transform.gpu.map_forall_to_blocks %func generate_gpu_launch : (!transform.any_op) -> !transform.any_op

    // Stage the A and B tiles of each K step in shared memory.
    %staged = transform.structured.match ops{["linalg.matmul"]} attributes{kforge.staged} in %bufferized
      : (!transform.any_op) -> !transform.any_op
    %promoted = transform.structured.promote %staged
        {operands_to_promote = [0, 1], mapping = [#gpu.memory_space<workgroup>]}
        : (!transform.any_op) -> !transform.any_op
    // Drop the self-copies bufferization left behind, so only the two staging copies remain.
    %func1 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func1 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // Cooperative copies: 64x16 and 16x64 tiles, 4 contiguous elements per thread.
    %memref_copies = transform.structured.match ops{["memref.copy"]} in %bufferized
      : (!transform.any_op) -> !transform.any_op
    %copies = transform.kforge.copy_to_linalg %memref_copies : (!transform.any_op) -> !transform.any_op
    %copy_a, %copy_b = transform.split_handle %copies : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tiled_a, %loop_a = transform.structured.tile_using_forall %copy_a tile_sizes [1, 4]
        (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tiled_b, %loop_b = transform.structured.tile_using_forall %copy_b tile_sizes [1, 4]
        (mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>])
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // Each thread: 4x4 outputs, K step 4, vectorized.
    %thread_mm, %thread_loop = transform.structured.tile_using_forall %promoted tile_sizes [4, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %inner_mm, %inner_loop = transform.structured.tile_using_for %thread_mm tile_sizes [0, 0, 4]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %inner_mm : !transform.any_op
    transform.structured.vectorize %tiled_a : !transform.any_op
    transform.structured.vectorize %tiled_b : !transform.any_op

    %func2 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    // Vectorized matmuls come out as multiply + multi-reduction: fold them back into contractions, which
    // lower to outer products (FMAs on 1-D vectors) rather than horizontal reductions.
    transform.apply_patterns to %func2 {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op
    %launch2 = transform.structured.match ops{["gpu.launch"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch2 block_dims = [16, 16, 1] : (!transform.any_op) -> !transform.any_op

    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
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
