// RUN: kforge-opt %s -split-input-file -transform-interpreter -canonicalize -verify-diagnostics | FileCheck %s

// A thread per row (row max, then x - max) becomes 32 lanes per row: each lane takes the columns l, l + 32,
// ...; the row max is a per-lane partial combined by gpu.subgroup_reduce; each lane inserts its columns.
// CHECK-LABEL: func.func @row_max_shift
// CHECK: scf.forall (%[[ROW:.*]], %[[LANE:.*]]) in (4, 32)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[LANE]]] [1, 2] [1, 32] : tensor<1x64xf32> to tensor<1x2xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<1x2xf32>)
// CHECK: %[[PARTIAL:.*]] = tensor.extract
// CHECK: gpu.subgroup_reduce maximumf %[[PARTIAL]] : (f32) -> f32
// CHECK: } -> tensor<1x2xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[ROW]], %[[LANE]]] [1, 2] [1, 32]
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_max_shift(%x: tensor<4x64xf32>, %out: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %stats = tensor.empty() : tensor<4xf32>
  %r = scf.forall (%i) in (4) shared_outs(%o = %out) -> (tensor<4x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %s = tensor.extract_slice %stats[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %init = linalg.fill ins(%ninf : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row, %max : tensor<1x64xf32>, tensor<1xf32>) outs(%dest : tensor<1x64xf32>) {
    ^bb0(%in: f32, %m: f32, %unused: f32):
      %d = arith.subf %in, %m : f32
      linalg.yield %d : f32
    } -> tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %shifted into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<4x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 32} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// 16 lanes per row: two rows per warp, the sum reduced within clusters of 16 lanes.
// CHECK-LABEL: func.func @row_sum_scale
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 16)
// CHECK: gpu.subgroup_reduce add %{{.*}} cluster(size = 16) : (f32) -> f32
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_sum_scale(%x: tensor<2x64xf32>, %out: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %zero = arith.constant 0.0 : f32
  %stats = tensor.empty() : tensor<2xf32>
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<2x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
    %s = tensor.extract_slice %stats[%i] [1] [1] : tensor<2xf32> to tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
    %scaled = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row, %sum : tensor<1x64xf32>, tensor<1xf32>) outs(%dest : tensor<1x64xf32>) {
    ^bb0(%in: f32, %t: f32, %unused: f32):
      %d = arith.divf %in, %t : f32
      linalg.yield %d : f32
    } -> tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %scaled into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<2x64xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<2x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 16} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A row sum as the result: each lane accumulates its columns in a tensor of its own (not in the output),
// the lanes combine, and lane 0 alone inserts the row's total (the others insert an empty slice).
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.forall (%[[ROW:.*]], %[[LANE:.*]]) in (4, 32)
// CHECK: %[[OWN:.*]] = tensor.empty() : tensor<1xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OWN]] : tensor<1xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<1xf32>)
// CHECK: gpu.subgroup_reduce add
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: %[[COUNT:.*]] = arith.select %[[FIRST]], %c1, %c0 : index
// CHECK: %[[PIECE:.*]] = tensor.extract_slice %{{.*}}[0] [%[[COUNT]]] [1] : tensor<1xf32> to tensor<?xf32>
// CHECK: tensor.parallel_insert_slice %[[PIECE]] into %{{.*}}[%[[ROW]]] [%[[COUNT]]] [1]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: tensor<4x64xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%i) in (4) shared_outs(%o = %out) -> (tensor<4xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %s = tensor.extract_slice %o[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %sum into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<4xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A reduction that does not start from its combiner's neutral element cannot be split into partials.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @not_neutral(%x: tensor<2x64xf32>, %out: tensor<2xf32>) -> tensor<2x64xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x64xf32>
  %r = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
    %s = tensor.extract_slice %out[%i] [1] [1] : tensor<2xf32> to tensor<1xf32>
    %init = linalg.fill ins(%one : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
    %b = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%sum : tensor<1xf32>) outs(%dest : tensor<1x64xf32>) {
    ^bb0(%t: f32, %unused: f32):
      linalg.yield %t : f32
    } -> tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %b into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<2x64xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<2x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{a row reduction that does not start from its combiner's neutral element}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Rows of 48 elements do not split over 32 lanes.
#id = affine_map<(i, j) -> (i, j)>
func.func @narrow(%x: tensor<2x48xf32>, %out: tensor<2x48xf32>) -> tensor<2x48xf32> {
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<2x48xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 48] [1, 1] : tensor<2x48xf32> to tensor<1x48xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 48] [1, 1] : tensor<2x48xf32> to tensor<1x48xf32>
    %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row : tensor<1x48xf32>) outs(%dest : tensor<1x48xf32>) {
    ^bb0(%in: f32, %unused: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<1x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %neg into %o[%i, 0] [1, 48] [1, 1] : tensor<1x48xf32> into tensor<2x48xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<2x48xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // A row the lanes do not divide is distributed one column at a time (each lane's slice sized by its own
    // count, test/Tune/lanes-ragged.test); not with vectors of columns.
    // expected-error @+1 {{the row width (48) is not a multiple of 32 lanes x 2 columns: a row that is not is distributed one column at a time (no vector)}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {vector = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @not_a_forall() {
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected an scf.forall with one induction variable from 0, step 1}}
    %lanes = transform.kforge.distribute_rows_to_lanes %func {lanes = 32} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @bad_lanes() {
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{lanes must be a power of 2 from 2 to 32 or a multiple of 32 up to 1024, not 12}}
    %lanes = transform.kforge.distribute_rows_to_lanes %func {lanes = 12} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// 128 lanes: a row over four warps. The block is the one row; its max is a uniform gpu.all_reduce over the
// block (shuffles, then shared memory across the warps), not a warp's subgroup_reduce.
// CHECK-LABEL: func.func @block_wide_row
// CHECK: scf.forall (%{{.*}}, %[[LANE:.*]]) in (1, 128)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[LANE]]] [1, 4] [1, 128] : tensor<1x512xf32> to tensor<1x4xf32>
// CHECK: gpu.all_reduce maximumf %{{.*}} uniform {
// CHECK-NOT: gpu.subgroup_reduce
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @block_wide_row(%x: tensor<1x512xf32>, %out: tensor<1x512xf32>) -> tensor<1x512xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %stats = tensor.empty() : tensor<1xf32>
  %r = scf.forall (%i) in (1) shared_outs(%o = %out) -> (tensor<1x512xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 512] [1, 1] : tensor<1x512xf32> to tensor<1x512xf32>
    %s = tensor.extract_slice %stats[%i] [1] [1] : tensor<1xf32> to tensor<1xf32>
    %init = linalg.fill ins(%ninf : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x512xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 512] [1, 1] : tensor<1x512xf32> to tensor<1x512xf32>
    %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row, %max : tensor<1x512xf32>, tensor<1xf32>) outs(%dest : tensor<1x512xf32>) {
    ^bb0(%in: f32, %m: f32, %unused: f32):
      %d = arith.subf %in, %m : f32
      linalg.yield %d : f32
    } -> tensor<1x512xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %shifted into %o[%i, 0] [1, 512] [1, 1] : tensor<1x512xf32> into tensor<1x512xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<1x512xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 128} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// More than a warp's lanes need a block of one row: with two rows, the block-wide reduction would mix them.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @two_rows_block_wide(%x: tensor<2x512xf32>, %out: tensor<2xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<2xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 512] [1, 1] : tensor<2x512xf32> to tensor<1x512xf32>
    %s = tensor.extract_slice %o[%i] [1] [1] : tensor<2xf32> to tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x512xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %sum into %o[%i] [1] [1] : tensor<1xf32> into tensor<2xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<2xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{lanes = 64 spreads a row over several warps, reduced over the whole block: the forall must have one row, not 2}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 64} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// vector = 2: lane l owns columns 2l, 2l + 1, 2l + 64, 2l + 65 (two slices of stride 64), the row's max is
// the max of the lane's two partials before the shuffles, and each slice of the output is extracted from the
// shared output and inserted back at the same offset (one value: they bufferize in place).
// (The column maps are printed before the function.)
// CHECK-DAG: affine_map<(d0) -> (d0 * 2)>
// CHECK-DAG: affine_map<(d0) -> (d0 * 2 + 1)>
// CHECK-LABEL: func.func @row_max_shift_vector
// CHECK: scf.forall (%[[ROW:.*]], %[[LANE:.*]]) in (4, 32) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}] [1, 2] [1, 64] : tensor<1x128xf32> to tensor<1x2xf32>
// CHECK: %[[P0:.*]] = tensor.extract
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}] [1, 2] [1, 64] : tensor<1x128xf32> to tensor<1x2xf32>
// CHECK: %[[P1:.*]] = tensor.extract
// CHECK: %[[BOTH:.*]] = arith.maximumf %[[P1]], %[[P0]] : f32
// CHECK: gpu.subgroup_reduce maximumf %[[BOTH]] : (f32) -> f32
// CHECK: tensor.extract_slice %[[OUT]][%[[ROW]], %[[CA:[0-9a-z]+]]] [1, 2] [1, 64] : tensor<4x128xf32> to tensor<1x2xf32>
// CHECK: tensor.extract_slice %[[OUT]][%[[ROW]], %[[CB:[0-9a-z]+]]] [1, 2] [1, 64] : tensor<4x128xf32> to tensor<1x2xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[ROW]], %[[CA]]] [1, 2] [1, 64]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[ROW]], %[[CB]]] [1, 2] [1, 64]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_max_shift_vector(%x: tensor<4x128xf32>, %out: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %stats = tensor.empty() : tensor<4xf32>
  %r = scf.forall (%i) in (4) shared_outs(%o = %out) -> (tensor<4x128xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 128] [1, 1] : tensor<4x128xf32> to tensor<1x128xf32>
    %s = tensor.extract_slice %stats[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %init = linalg.fill ins(%ninf : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x128xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 128] [1, 1] : tensor<4x128xf32> to tensor<1x128xf32>
    %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row, %max : tensor<1x128xf32>, tensor<1xf32>) outs(%dest : tensor<1x128xf32>) {
    ^bb0(%in: f32, %m: f32, %unused: f32):
      %d = arith.subf %in, %m : f32
      linalg.yield %d : f32
    } -> tensor<1x128xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %shifted into %o[%i, 0] [1, 128] [1, 1] : tensor<1x128xf32> into tensor<4x128xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<4x128xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 32, vector = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @vector_not_dividing(%x: tensor<1x96xf32>, %out: tensor<1x96xf32>) -> tensor<1x96xf32> {
  %r = scf.forall (%i) in (1) shared_outs(%o = %out) -> (tensor<1x96xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 96] [1, 1] : tensor<1x96xf32> to tensor<1x96xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 96] [1, 1] : tensor<1x96xf32> to tensor<1x96xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%row : tensor<1x96xf32>) outs(%dest : tensor<1x96xf32>) {
    ^bb0(%in: f32, %unused: f32):
      linalg.yield %in : f32
    } -> tensor<1x96xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %o[%i, 0] [1, 96] [1, 1] : tensor<1x96xf32> into tensor<1x96xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<1x96xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the row width (96) is not a multiple of 32 lanes x 4 columns}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 32, vector = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @vector_three(%x: tensor<1x96xf32>, %out: tensor<1x96xf32>) -> tensor<1x96xf32> {
  %r = scf.forall (%i) in (1) shared_outs(%o = %out) -> (tensor<1x96xf32>) {
    scf.forall.in_parallel {
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<1x96xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{vector must be 1, 2 or 4 consecutive columns per lane, not 3}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 32, vector = 3} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// moments: a layernorm's row sum and centred sum of squares over 64 lanes (two warps) merge in one round: each
// lane sums its 4 columns, divides by 4 for its mean and sums its squared deviations from it; the (sum,
// squares) pairs merge by paired shuffles within each warp (5 steps), lane 0 of each warp writes the warp's
// pair to two workgroup buffers of 2, one barrier, and every lane merges the two warps' pairs (1 step). No
// second reduction, no gpu.subgroup_reduce or gpu.all_reduce; the squares are not computed.
// CHECK-LABEL: func.func @moments_two_warps
// CHECK-DAG: %[[SUMS:.*]] = memref.alloc() : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[SQUARES:.*]] = memref.alloc() : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK: scf.forall (%{{.*}}, %[[LANE:.*]]) in (1, 64)
// CHECK: %[[S:.*]] = tensor.extract %
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[S]], %{{.*}}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<1x4xf32>)
// CHECK: arith.subf %{{.*}}, %[[MEAN]]
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[SUMS]]
// CHECK-NEXT: memref.store %{{.*}}, %[[SQUARES]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SUMS]]
// CHECK: memref.load %[[SQUARES]]
// CHECK-COUNT-2: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.subgroup_reduce
// CHECK-NOT: gpu.all_reduce
// CHECK: math.rsqrt
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @moments_two_warps(%x: tensor<1x256xf32>, %out: tensor<1x256xf32>) -> tensor<1x256xf32> {
  %zero = arith.constant 0.0 : f32
  %stats = tensor.empty() : tensor<1xf32>
  %r = scf.forall (%i) in (1) shared_outs(%o = %out) -> (tensor<1x256xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 256] [1, 1] : tensor<1x256xf32> to tensor<1x256xf32>
    %s = tensor.extract_slice %stats[%i] [1] [1] : tensor<1xf32> to tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x256xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 256] [1, 1] : tensor<1x256xf32> to tensor<1x256xf32>
    %c = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row, %sum : tensor<1x256xf32>, tensor<1xf32>) outs(%dest : tensor<1x256xf32>) {
    ^bb0(%in: f32, %t: f32, %unused: f32):
      %n = arith.constant 256.0 : f32
      %mean = arith.divf %t, %n : f32
      %d = arith.subf %in, %mean : f32
      linalg.yield %d : f32
    } -> tensor<1x256xf32>
    %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c : tensor<1x256xf32>) outs(%dest : tensor<1x256xf32>) {
    ^bb0(%in: f32, %unused: f32):
      %p = arith.mulf %in, %in : f32
      linalg.yield %p : f32
    } -> tensor<1x256xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%sq : tensor<1x256xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c, %ss : tensor<1x256xf32>, tensor<1xf32>) outs(%dest : tensor<1x256xf32>) {
    ^bb0(%in: f32, %q: f32, %unused: f32):
      %n = arith.constant 256.0 : f32
      %eps = arith.constant 1.0e-05 : f32
      %var = arith.divf %q, %n : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %v = arith.mulf %in, %rs : f32
      linalg.yield %v : f32
    } -> tensor<1x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %o[%i, 0] [1, 256] [1, 1] : tensor<1x256xf32> into tensor<1x256xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<1x256xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 64, moments} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// moments within a warp (8 lanes per row, 4 rows per warp), the centring by the reciprocal (x - sum * (1/N))
// and the squares summed by the reduction itself (in * in + acc): 3 steps of paired shuffles, no barrier, no
// shared memory.
// CHECK-LABEL: func.func @moments_in_a_warp
// CHECK-NOT: memref.alloc
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (4, 8)
// CHECK-COUNT-6: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @moments_in_a_warp(%x: tensor<4x64xf32>, %out: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %stats = tensor.empty() : tensor<4xf32>
  %r = scf.forall (%i) in (4) shared_outs(%o = %out) -> (tensor<4x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %s = tensor.extract_slice %stats[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %acc, %in : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    %dest = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %c = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%row, %sum : tensor<1x64xf32>, tensor<1xf32>) outs(%dest : tensor<1x64xf32>) {
    ^bb0(%in: f32, %t: f32, %unused: f32):
      %inv = arith.constant 0.015625 : f32
      %mean = arith.mulf %t, %inv : f32
      %d = arith.subf %in, %mean : f32
      linalg.yield %d : f32
    } -> tensor<1x64xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%c : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %p = arith.mulf %in, %in : f32
      %a = arith.addf %p, %acc : f32
      linalg.yield %a : f32
    } -> tensor<1xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c, %ss : tensor<1x64xf32>, tensor<1xf32>) outs(%dest : tensor<1x64xf32>) {
    ^bb0(%in: f32, %q: f32, %unused: f32):
      %v = arith.mulf %in, %q : f32
      linalg.yield %v : f32
    } -> tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<4x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 8, moments} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// moments without a centred sum of squares in the row program (a row max) is an error, not a silent no-op.
func.func @moments_without_variance(%x: tensor<1x64xf32>, %out: tensor<1xf32>) -> tensor<1xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %r = scf.forall (%i) in (1) shared_outs(%o = %out) -> (tensor<1xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> to tensor<1x64xf32>
    %s = tensor.extract_slice %o[%i] [1] [1] : tensor<1xf32> to tensor<1xf32>
    %init = linalg.fill ins(%ninf : f32) outs(%s : tensor<1xf32>) -> tensor<1xf32>
    %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x64xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %max into %o[%i] [1] [1] : tensor<1xf32> into tensor<1xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<1xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{moments: the row program has no row sum whose centred values (x - sum / N) are squared and summed}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 32, moments} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
