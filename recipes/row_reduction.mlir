// RUN: kforge-opt %s
//
// Row-wise kernels (softmax, layernorm, row sums): one block per row, 256 threads cooperating on it.
//   The op whose result the function returns is the root; it is tiled one row per block and every linalg op
//   feeding it is fused into that block loop. Inside the block each elementwise op is split over the threads
//   (16 contiguous elements each), and each reduction becomes per-thread partial results in shared memory
//   that one thread combines. Rows and values the block reuses (exp(x - max), the row max, ...) live in
//   shared memory, never in global memory. Limits: 2-D ops reducing over the last dimension; the row must
//   fit in 48 KB of shared memory per intermediate; no warp shuffles, and a row is read once per phase.
module attributes {transform.with_named_sequence} {
  // A linalg op whose result feeds another linalg op, i.e. a producer that can be fused into its consumer.
  transform.named_sequence @match_fusable_producer(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.fill", "linalg.generic"] : !transform.any_op
    %user = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %u = transform.match.structured.result %structured[0] any : (!transform.any_op) -> !transform.any_op
      transform.match.structured.yield %u : !transform.any_op
    }
    transform.match.operation_name %user ["linalg.generic"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @mark_producer(%op: !transform.any_op {transform.readonly}) {
    transform.annotate %op "kforge.producer" : !transform.any_op
    transform.yield
  }

  // A 2-D generic whose inner loop is a reduction (row sum, row max, ...).
  transform.named_sequence @match_row_reduction(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %rank = transform.match.structured.rank %structured : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %two : !transform.param<i64>
      transform.match.structured.dim %structured[-1] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  // A 2-D generic whose loops are all parallel (elementwise over the row, broadcasts allowed).
  transform.named_sequence @match_row_elementwise(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %rank = transform.match.structured.rank %structured : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %two : !transform.param<i64>
      transform.match.structured.dim %structured[all] {parallel} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  // Ops directly in the block loop (their grandparent is the function), not yet split over threads.
  transform.named_sequence @match_block_level(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %grandparent = transform.get_parent_op %op {nth_parent = 2} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %grandparent ["func.func"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_block_row_reduction(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %block_op = transform.include @match_block_level failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    %reduction = transform.include @match_row_reduction failures(propagate) (%block_op)
      : (!transform.any_op) -> !transform.any_op
    transform.yield %reduction : !transform.any_op
  }
  transform.named_sequence @match_block_row_elementwise(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %block_op = transform.include @match_block_level failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    %elementwise = transform.include @match_row_elementwise failures(propagate) (%block_op)
      : (!transform.any_op) -> !transform.any_op
    transform.yield %elementwise : !transform.any_op
  }

  // Partial results over 1/256 of the row per thread, in shared memory; thread 0 then combines them (all
  // threads doing it would race on the result), initialising the result itself. Returns the combining loop.
  transform.named_sequence @split_reduction(%op: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %init = transform.get_producer_of_operand %op[1] : (!transform.any_op) -> !transform.any_op
    %fill, %partial, %combine, %forall = transform.structured.tile_reduction_using_forall %op
        by num_threads = [0, 256] mapping = [#gpu.thread<x>]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // Each thread initialises its own slot (a fill outside the loop would race with the other threads' partials).
    %fused_fill, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %partials, %new = transform.structured.bufferize_to_allocation %forall2
        {memory_space = 3, alloc_op = "memref.alloca", bufferize_destination_only}
        : !transform.any_op
    %tiled_combine, %combine_loop = transform.structured.tile_using_forall %combine num_threads [1]
        (mapping = [#gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fused_init, %combine_loop2 = transform.structured.fuse_into_containing_op %init into %combine_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield %combine_loop2 : !transform.any_op
  }
  // The root reduction writes the function's output.
  transform.named_sequence @distribute_root_reduction(%op: !transform.any_op {transform.consumed}) {
    %combine_loop = transform.include @split_reduction failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
  // A reduction the block uses again (row max, row sum): its value goes to shared memory for all threads.
  transform.named_sequence @distribute_reduction(%op: !transform.any_op {transform.consumed}) {
    %combine_loop = transform.include @split_reduction failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    %value, %new = transform.structured.bufferize_to_allocation %combine_loop
        {memory_space = 3, alloc_op = "memref.alloca", bufferize_destination_only}
        : !transform.any_op
    transform.yield
  }
  // The root elementwise op writes the function's output directly.
  transform.named_sequence @distribute_elementwise(%op: !transform.any_op {transform.consumed}) {
    %tiled, %forall = transform.structured.tile_using_forall %op num_threads [0, 256]
        (mapping = [#gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
  // An elementwise op whose row the block reads again: split over the threads, row kept in shared memory.
  transform.named_sequence @distribute_elementwise_to_shared(%op: !transform.any_op {transform.consumed}) {
    %tiled, %forall = transform.structured.tile_using_forall %op num_threads [0, 256]
        (mapping = [#gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %new = transform.structured.bufferize_to_allocation %forall
        {memory_space = 3, alloc_op = "memref.alloca", bufferize_destination_only}
        : !transform.any_op
    transform.yield
  }

  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    %marked = transform.foreach_match in %func
        @match_fusable_producer -> @mark_producer : (!transform.any_op) -> !transform.any_op
    %producers = transform.structured.match attributes{kforge.producer} in %module
      : (!transform.any_op) -> !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %module : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op

    // One row per block, with every producer of the root fused in.
    %block_root, %block_loop = transform.structured.tile_using_forall %root tile_sizes [1]
        (mapping = [#gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_producers, %block_loop1 = transform.structured.fuse_into_containing_op %producers into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    // A producer with several users in the row (exp in softmax feeds both the sum and the division) is fused
    // for one use only; fuse what the loop still reads from outside once more (nothing left is fine).
    %outside = transform.structured.match attributes{kforge.producer} in %module : (!transform.any_op) -> !transform.any_op
    transform.sequence %block_loop1 : !transform.any_op failures(suppress) {
    ^bb0(%loop: !transform.any_op):
      %fused, %new_loop = transform.structured.fuse_into_containing_op %outside into %loop
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    %func1 = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func1 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func1 : !transform.any_op

    // Fused elementwise producers that shared the root's tensor.empty now write into the kernel's output;
    // promoting them to shared memory would copy that output in first, racing with the threads' writes.
    // Give them their own empty outputs (the root keeps writing the output).
    %fused_producers = transform.structured.match ops{["linalg.generic"]} attributes{kforge.producer} in %module
      : (!transform.any_op) -> !transform.any_op
    %fresh = transform.kforge.outs_to_empty %fused_producers : (!transform.any_op) -> !transform.any_op

    // Threads of the block share each op of the row: the root first, then the ops feeding it.
    %root_done = transform.foreach_match restrict_root in %block_root
        @match_row_reduction -> @distribute_root_reduction, @match_row_elementwise -> @distribute_elementwise
        : (!transform.any_op) -> !transform.any_op
    // Reductions and elementwise ops are handled in two walks: a walk over ops that the previous action
    // rewired skips some of them.
    %block_generics = transform.structured.match ops{["linalg.generic"]} in %module
      : (!transform.any_op) -> !transform.any_op
    %reductions_done = transform.foreach_match restrict_root in %block_generics
        @match_block_row_reduction -> @distribute_reduction : (!transform.any_op) -> !transform.any_op
    %block_generics2 = transform.structured.match ops{["linalg.generic"]} in %module
      : (!transform.any_op) -> !transform.any_op
    %elementwise_done = transform.foreach_match restrict_root in %block_generics2
        @match_block_row_elementwise -> @distribute_elementwise_to_shared : (!transform.any_op) -> !transform.any_op

    %func2 = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func2 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func3 : !transform.any_op
    // Shared-memory buffers become workgroup globals (what the GPU lowering turns into .shared).
    %allocas = transform.structured.match ops{["memref.alloca"]} in %bufferized
      : (!transform.any_op) -> !transform.op<"memref.alloca">
    %get_global, %global = transform.memref.alloca_to_global %allocas
      : (!transform.op<"memref.alloca">) -> (!transform.any_op, !transform.any_op)
    %launch = transform.gpu.map_forall_to_blocks %func3 generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [256, 1, 1] : (!transform.any_op) -> !transform.any_op
    %func4 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func4 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func4 : !transform.any_op
    transform.yield
  }
}
