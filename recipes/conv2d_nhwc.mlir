// RUN: kforge-opt %s
//
// Direct 2-D convolution, NHWC input and HWCF filter (linalg.conv_2d_nhwc_hwcf), with the fill of the
// output fused in. Each block computes an 8 (output columns) x 64 (output channels) tile of one output
// row, for every image of the batch in turn, with 8x16 threads; each thread keeps 4 output channels in
// registers and accumulates them over the filter window and the input channels, 4 channels a step,
// vectorized. Shapes: output width divisible by 8,
// output channels by 64, input channels by 4. Limit: no shared-memory reuse of the input window.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %conv = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %module
      : (!transform.any_op) -> !transform.any_op
    %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op

    // Loops: n, oh, ow, f, kh, kw, c. Blocks over (oh, ow, f); the batch is a loop inside each thread.
    // (A 4-D block loop with linear mapping covered only the first batch in upstream MLIR 22: grid sized
    // without the outermost dimension.)
    %block_conv, %block_loop = transform.structured.tile_using_forall %conv tile_sizes [0, 1, 8, 64]
        (mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>])
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_fill, %block_loop2 = transform.structured.fuse_into_containing_op %fill into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_conv, %thread_loop = transform.structured.tile_using_forall %block_conv tile_sizes [0, 0, 1, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_fill, %thread_loop2 = transform.structured.fuse_into_containing_op %block_fill into %thread_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %batch_conv, %batch_loop = transform.structured.tile_using_for %thread_conv tile_sizes [1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // Filter window and input channels as loops (4 channels a step) around a vectorized 1x4 accumulator.
    %generic_conv = transform.structured.generalize %batch_conv : (!transform.any_op) -> !transform.any_op
    %red_conv, %red_loops:3 = transform.structured.tile_using_for %generic_conv tile_sizes [0, 0, 0, 0, 1, 1, 4]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %thread_loop2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %thread_ops = transform.structured.match interface{LinalgOp} in %thread_loop2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %thread_ops : !transform.any_op

    // The fills outside the loops only feed the loops' destinations, which the fused fills overwrite: drop them.
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func2 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func2 {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %func2 generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [16, 8, 1] : (!transform.any_op) -> !transform.any_op

    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // The 1x4 accumulator stays in registers across the filter-window and channel loops.
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
