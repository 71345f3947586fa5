// A kforge schedule, rendered by kforge-tune from the actions below (one fragment per action).
// Replay: kforge-opt PAYLOAD -transform-preload-library=transform-library-paths=THIS_FILE -transform-interpreter
//   actions: tile(block, 1x0x2x0); fuse(block); tile(thread, 0x16x1x8); fuse(thread); stage(16)
module attributes {transform.with_named_sequence} {
  // A linalg op whose first result feeds another linalg op: a producer that can be fused.
  transform.named_sequence @match_fusable_producer(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %user = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %u = transform.match.structured.result %structured[0] any : (!transform.any_op) -> !transform.any_op
      transform.match.structured.yield %u : !transform.any_op
    }
    transform.match.structured failures(propagate) %user : !transform.any_op {
    ^bb0(%structured_user: !transform.any_op):
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @mark_producer(%op: !transform.any_op {transform.readonly}) {
    transform.annotate %op "kforge.producer" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @match_left_at_block(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %parent = transform.get_parent_op %op {nth_parent = 1} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %parent ["func.func"] : !transform.any_op
    transform.match.structured failures(propagate) %op : !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %u = transform.match.structured.result %structured[0] any : (!transform.any_op) -> !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_left_at_thread(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %parent = transform.get_parent_op %op {nth_parent = 1} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %parent ["scf.forall"] : !transform.any_op
    %grandparent = transform.get_parent_op %op {nth_parent = 2} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %grandparent ["func.func"] : !transform.any_op
    transform.match.structured failures(propagate) %op : !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %u = transform.match.structured.result %structured[0] any : (!transform.any_op) -> !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  // An op whose last loop is a reduction (the convolution): stage computes it as its implicit GEMM.
  transform.named_sequence @match_implicit_gemm(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.structured failures(propagate) %op : !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      transform.match.structured.dim %structured[-1] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @mark_implicit_gemm(%op: !transform.any_op {transform.readonly}) {
    transform.annotate %op "kforge.implicit_gemm" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %entry = transform.structured.match ops{["func.func"]} attributes{sym_name = "conv_resnet_3x3"} in %module : (!transform.any_op) -> !transform.any_op
    %unmarked = transform.foreach_match in %entry @match_fusable_producer -> @mark_producer : (!transform.any_op) -> !transform.any_op
    %func = transform.foreach_match in %unmarked @match_implicit_gemm -> @mark_implicit_gemm : (!transform.any_op) -> !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %func : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op
    // action 0: tile(block, 1x0x2x0)
    %block_root0, %block_loop1 = transform.structured.tile_using_forall %root tile_sizes [1, 0, 2, 0] (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // action 1: fuse(block)
    %producers2 = transform.structured.match attributes{kforge.producer} in %func : (!transform.any_op) -> !transform.any_op
    %fused3, %loop4 = transform.structured.fuse_into_containing_op %producers2 into %block_loop1 : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %left5 = transform.collect_matching @match_left_at_block in %func : (!transform.any_op) -> !transform.any_op
    transform.sequence %loop4 : !transform.any_op failures(suppress) {
    ^bb0(%containing: !transform.any_op):
      %more, %more_loop = transform.structured.fuse_into_containing_op %left5 into %containing : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    // action 2: tile(thread, 0x16x1x8)
    // (staged mma: the warp tiles size the warp grid)
    // action 3: fuse(thread)
    // (staged mma: the warp tiles need no loop)
    // finish (gpu): bufferize, map loops to the grid and the block, lower vectors
    %tfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "conv_resnet_3x3"} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %tfunc {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %tfunc : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : (!transform.any_op) -> !transform.any_op
    %bfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "conv_resnet_3x3"} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %bfunc {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %bfunc : !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %bfunc generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [56, 1, 1] : (!transform.any_op) -> !transform.any_op
    %mfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "conv_resnet_3x3"} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %mfunc {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // action 4: stage(16): the block's convolution as its implicit GEMM through shared memory, each thread's share in registers
    %stage_func6 = transform.structured.match ops{["func.func"]} attributes{sym_name = "conv_resnet_3x3"} in %bufferized : (!transform.any_op) -> !transform.any_op
    %block_convolutions7 = transform.structured.match attributes{kforge.implicit_gemm} in %stage_func6 : (!transform.any_op) -> !transform.any_op
    transform.kforge.implicit_gemm_to_simt_staged %block_convolutions7 {block_k = 16, thread_grid = array<i64: 4, 14>} : (!transform.any_op) -> ()
    transform.apply_cse to %stage_func6 : !transform.any_op
    transform.yield
  }
}
