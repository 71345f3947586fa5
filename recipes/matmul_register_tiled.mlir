// RUN: kforge-opt %s
//
// Matmul and batched matmul with block tiling, per-thread register tiling and a vectorized K loop:
//   each block computes 64x64 outputs (one batch at a time) with 16x16 threads; each thread keeps a 4x4
//   accumulator in registers and walks K in steps of 4, reading A and B straight from global memory.
// The fill that initialises the output is fused into the same kernel.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_matmul(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_batch_matmul(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.batch_matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @tile_matmul(%matmul: !transform.any_op {transform.consumed}) {
    %fill = transform.get_producer_of_operand %matmul[2] : (!transform.any_op) -> !transform.any_op
    %block_mm, %block_loop = transform.structured.tile_using_forall %matmul tile_sizes [64, 64]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_fill, %block_loop2 = transform.structured.fuse_into_containing_op %fill into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_mm, %thread_loop = transform.structured.tile_using_forall %block_mm tile_sizes [4, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_fill, %thread_loop2 = transform.structured.fuse_into_containing_op %block_fill into %thread_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %k_mm, %k_loop = transform.structured.tile_using_for %thread_mm tile_sizes [0, 0, 4]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %k_mm : !transform.any_op
    transform.structured.vectorize %thread_fill : !transform.any_op
    transform.yield
  }

  transform.named_sequence @tile_batch_matmul(%matmul: !transform.any_op {transform.consumed}) {
    %fill = transform.get_producer_of_operand %matmul[2] : (!transform.any_op) -> !transform.any_op
    %block_mm, %block_loop = transform.structured.tile_using_forall %matmul tile_sizes [1, 64, 64]
        (mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>])
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_fill, %block_loop2 = transform.structured.fuse_into_containing_op %fill into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_mm, %thread_loop = transform.structured.tile_using_forall %block_mm tile_sizes [0, 4, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_fill, %thread_loop2 = transform.structured.fuse_into_containing_op %block_fill into %thread_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %k_mm, %k_loop = transform.structured.tile_using_for %thread_mm tile_sizes [0, 0, 0, 4]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // Drop the unit batch dimension of the per-thread tile so it vectorizes like a matmul.
    %generic_mm = transform.structured.generalize %k_mm : (!transform.any_op) -> !transform.any_op
    %generic_fill = transform.structured.generalize %thread_fill : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %thread_loop2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %thread_ops = transform.structured.match interface{LinalgOp} in %thread_loop2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %thread_ops : !transform.any_op
    transform.yield
  }

  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    %tiled_func = transform.foreach_match in %func
        @match_matmul -> @tile_matmul, @match_batch_matmul -> @tile_batch_matmul
        : (!transform.any_op) -> !transform.any_op

    %func1 = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func1 {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func1 : !transform.any_op

    // Buffers, then the GPU mapping (which needs loops without tensor results).
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func2 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    // Self-copies left by bufferizing the loops fold away here.
    transform.apply_patterns to %func2 {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %func2 generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [16, 16, 1] : (!transform.any_op) -> !transform.any_op

    // Folding the subviews lets the hoisting see that the C tile is loop-invariant: the 4x4 accumulator then
    // stays in registers across the K loop. Contractions become FMAs on 1-D vectors.
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
