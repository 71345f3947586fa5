// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer | FileCheck %s
// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer -kforge-normalize-importer | FileCheck %s

// Cross entropy as torch-mlir writes it (nll_loss over a log-softmax): the loss picks each row's
// log-probability at its class index with a tensor.extract inside its body, from the whole 24x10
// log-softmax, which is not an operand (fuse could not take the reduction: "could not find next producer to
// fuse into container"). The element is computed where it is read instead: x[i, t_i] - max_i - log(sum_i),
// so the log-softmax tensor is gone; the row statistics (max, sum) are read at the loop's own index and
// become operands; only the read of the logits at the class index stays an extract, of a function argument.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<24x10xf32>, %[[T:[a-z0-9]+]]: tensor<24xi64>
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<24x10xf32>) outs({{.*}} : tensor<24xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<24x10xf32>, tensor<24xf32>) outs({{.*}} : tensor<24xf32>)
// CHECK: math.exp
// CHECK-NOT: tensor<24x10xf32>) outs({{.*}} : tensor<24x10xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]], %[[MAX]], %[[SUM]] : tensor<24xi64>, tensor<24xf32>, tensor<24xf32>) outs({{.*}} : tensor<1xf32>)
// CHECK-NEXT: ^bb0(%[[TI:[a-z0-9_]+]]: i64, %[[MI:[a-z0-9_]+]]: f32, %[[SI:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
// CHECK: %[[ROW:.*]] = linalg.index 1 : index
// CHECK: %[[COL:.*]] = arith.index_cast %[[TI]] : i64 to index
// CHECK: %[[PICK:.*]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<24x10xf32>
// CHECK: %[[SHIFTED:.*]] = arith.subf %[[PICK]], %[[MI]] : f32
// CHECK: %[[LOG:.*]] = math.log %[[SI]] : f32
// CHECK: arith.subf %[[SHIFTED]], %[[LOG]] : f32
// CHECK-NOT: tensor.extract
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
func.func @cross_entropy(%x: tensor<24x10xf32>, %t: tensor<24xi64>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 24.0 : f32
  %e1 = tensor.empty() : tensor<24xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<24xf32>) -> tensor<24xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<24x10xf32>) outs(%m0 : tensor<24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<24xf32>
  %maxk = tensor.expand_shape %max [[0, 1]] output_shape [24, 1] : tensor<24xf32> into tensor<24x1xf32>
  %e2 = tensor.empty() : tensor<24x10xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %maxk : tensor<24x10xf32>, tensor<24x1xf32>) outs(%e2 : tensor<24x10xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<24x10xf32>
  %e3 = tensor.empty() : tensor<24x1xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<24x1xf32>) -> tensor<24x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]} ins(%shifted : tensor<24x10xf32>) outs(%s0 : tensor<24x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ex = math.exp %in : f32
    %r = arith.addf %ex, %out : f32
    linalg.yield %r : f32
  } -> tensor<24x1xf32>
  %logsum = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<24x1xf32>) outs(%e3 : tensor<24x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.log %in : f32
    linalg.yield %r : f32
  } -> tensor<24x1xf32>
  %logp = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]} ins(%shifted, %logsum : tensor<24x10xf32>, tensor<24x1xf32>) outs(%e2 : tensor<24x10xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.subf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<24x10xf32>
  %tk = tensor.expand_shape %t [[0, 1]] output_shape [24, 1] : tensor<24xi64> into tensor<24x1xi64>
  %picked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%tk : tensor<24x1xi64>) outs(%s0 : tensor<24x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = linalg.index 0 : index
    %j = arith.index_cast %in : i64 to index
    %v = tensor.extract %logp[%i, %j] : tensor<24x10xf32>
    linalg.yield %v : f32
  } -> tensor<24x1xf32>
  %flat = tensor.collapse_shape %picked [[0, 1]] : tensor<24x1xf32> into tensor<24xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %total = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%flat : tensor<24xf32>) outs(%z : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    %r = arith.addf %neg, %out : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%total : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %n : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}

// -----

// A read at constant places only (a rank-0 value inside a body) stays an extract through the normalization's
// fixed point: upstream's scalar-operand inlining turns such an operand back into one, and the two rewrites
// must not chase each other (this hung). Its last step then makes a whole rank-0 argument an operand, once (the
// second RUN line normalizes twice).
// CHECK-LABEL: func.func @scalar_read(
// CHECK-SAME: %{{.*}}: tensor<64xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<64xf32>, tensor<f32>)
// CHECK-NOT: tensor.extract
func.func @scalar_read(%x: tensor<64xf32>, %s: tensor<f32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = tensor.extract %s[] : tensor<f32>
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// A read at the loop's index of a tensor shorter than the loop (guarded in the body) stays an extract: as an
// operand it would be read at every point of the loop, past its end.
// CHECK-LABEL: func.func @guarded_read(
// CHECK: scf.if
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<32xf32>
func.func @guarded_read(%x: tensor<64xf32>, %s: tensor<32xf32>) -> tensor<64xf32> {
  %c32 = arith.constant 32 : index
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %inside = arith.cmpi slt, %i, %c32 : index
    %v = scf.if %inside -> (f32) {
      %y = tensor.extract %s[%i] : tensor<32xf32>
      scf.yield %y : f32
    } else {
      scf.yield %in : f32
    }
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// torch-mlir's nll_loss checks the class indices twice: in a linalg.generic of its own, without results
// (nothing a dispatch can hold: kforge-partition refused cross entropy for it), and again inside the
// reduction that reads the logits at them. The standalone copy goes; the reduction keeps its checks.
// CHECK-LABEL: func.func @repeated_checks(
// CHECK-NOT: tensor<24xi64>) {
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1xf32>)
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: cf.assert %{{.*}}, "index must be larger or equal to 0"
// CHECK: tensor.extract
// CHECK: return
#rows = affine_map<(d0) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#one = affine_map<(d0, d1) -> (d0)>
func.func @repeated_checks(%x: tensor<24x10xf32>, %t: tensor<24xi64>) -> tensor<1xf32> {
  %c10 = arith.constant 10 : index
  %c0 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#rows], iterator_types = ["parallel"]} ins(%t : tensor<24xi64>) {
  ^bb0(%in: i64):
    %i = arith.index_cast %in : i64 to index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    linalg.yield
  }
  %e = tensor.empty() : tensor<1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
  %r = linalg.generic {indexing_maps = [#col, #one], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<24xi64>) outs(%f : tensor<1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 1 : index
    %i = arith.index_cast %in : i64 to index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %x[%row, %i] : tensor<24x10xf32>
    %s = arith.addf %v, %out : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

// A check that no other op makes again stays: here the reduction checks only one of the two bounds, and of
// another index tensor the same message says nothing about this one.
// CHECK-LABEL: func.func @unrepeated_checks(
// CHECK: linalg.generic {{.*}} ins(%[[T:[a-z0-9]+]] : tensor<24xi64>) {
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: cf.assert %{{.*}}, "index must be larger or equal to 0"
// CHECK: linalg.generic {{.*}} ins(%[[U:[a-z0-9]+]] : tensor<24xi64>) {
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1xf32>)
#rows2 = affine_map<(d0) -> (d0)>
#col2 = affine_map<(d0, d1) -> (d1)>
#one2 = affine_map<(d0, d1) -> (d0)>
func.func @unrepeated_checks(%x: tensor<24x10xf32>, %t: tensor<24xi64>, %u: tensor<24xi64>) -> tensor<1xf32> {
  %c10 = arith.constant 10 : index
  %c0 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#rows2], iterator_types = ["parallel"]} ins(%t : tensor<24xi64>) {
  ^bb0(%in: i64):
    %i = arith.index_cast %in : i64 to index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    linalg.yield
  }
  linalg.generic {indexing_maps = [#rows2], iterator_types = ["parallel"]} ins(%u : tensor<24xi64>) {
  ^bb0(%in: i64):
    %i = arith.index_cast %in : i64 to index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    linalg.yield
  }
  %e = tensor.empty() : tensor<1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
  %r = linalg.generic {indexing_maps = [#col2, #col2, #one2], iterator_types = ["parallel", "reduction"]} ins(%t, %u : tensor<24xi64>, tensor<24xi64>) outs(%f : tensor<1xf32>) {
  ^bb0(%in: i64, %v: i64, %out: f32):
    %row = linalg.index 1 : index
    %i = arith.index_cast %in : i64 to index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %j = arith.index_cast %v : i64 to index
    %x0 = tensor.extract %x[%row, %i] : tensor<24x10xf32>
    %x1 = tensor.extract %x[%row, %j] : tensor<24x10xf32>
    %a = arith.addf %x0, %x1 : f32
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

// Index tables, as torch.export's group norm leaves them: constants holding each element's batch (i), group
// (j floordiv 2) and channel in its group (j mod 2), as a dense attribute or a resource blob, and a table of
// zeros. Each is computed from the loop that reads its dimension; a constant that is no such table (a
// permutation) stays.
// CHECK-LABEL: func.func @index_tables(
// CHECK-NOT: dense_resource
// CHECK: %[[P:.*]] = arith.constant dense<{{\[}}[1, 0, 3, 2], [1, 0, 3, 2]]> : tensor<2x4xi64>
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<2x4xi64>)
// CHECK: %[[J1:.*]] = linalg.index 1 : index
// CHECK-NEXT: arith.remui %[[J1]], %{{.*}} : index
// CHECK: %[[J2:.*]] = linalg.index 1 : index
// CHECK-NEXT: arith.divui %[[J2]], %{{.*}} : index
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: arith.index_cast %[[I]] : index to i64
// CHECK-NOT: dense_resource
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @index_tables(%x: tensor<2x4xf32>) -> tensor<2x4xi64> {
  %batch = arith.constant dense<[[0, 0, 0, 0], [1, 1, 1, 1]]> : tensor<2x4xi64>
  %group = arith.constant dense_resource<group_table> : tensor<2x4xi64>
  %within = arith.constant dense<[[0, 1, 0, 1], [0, 1, 0, 1]]> : tensor<2x4xi64>
  %zeros = arith.constant dense_resource<zero_table> : tensor<2x4xi64>
  %perm = arith.constant dense<[[1, 0, 3, 2], [1, 0, 3, 2]]> : tensor<2x4xi64>
  %e = tensor.empty() : tensor<2x4xi64>
  %r = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %batch, %group, %within, %zeros, %perm : tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x4xi64>, tensor<2x4xi64>, tensor<2x4xi64>, tensor<2x4xi64>) outs(%e : tensor<2x4xi64>) {
  ^bb0(%in: f32, %b: i64, %g: i64, %w: i64, %z: i64, %p: i64, %out: i64):
    %c4 = arith.constant 4 : i64
    %c2 = arith.constant 2 : i64
    %bg = arith.muli %b, %c4 : i64
    %gw = arith.muli %g, %c2 : i64
    %s0 = arith.addi %bg, %gw : i64
    %s1 = arith.addi %s0, %w : i64
    %s2 = arith.addi %s1, %z : i64
    %s3 = arith.addi %s2, %p : i64
    linalg.yield %s3 : i64
  } -> tensor<2x4xi64>
  return %r : tensor<2x4xi64>
}

{-#
  dialect_resources: {
    builtin: {
      group_table: "0x0800000000000000000000000000000000000000010000000000000001000000000000000000000000000000000000000000000001000000000000000100000000000000",
      zero_table: "0x0800000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}

// -----

// A whole rank-0 value read inside a body (a Frobenius norm's kernel dividing every element by the norm, which
// the partition passes in as an argument): an input read through (d0) -> (), which MLIR 22's vectorizer
// broadcasts; as a tensor.extract in the body, vectorize failed ("Attempted to vectorize, but failed").
// CHECK-DAG: #[[$ALL:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @divide_by_norm(
// CHECK-SAME: %[[NORM:.*]]: tensor<f32>, %[[X:.*]]: tensor<1024xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$ALL]], #[[$SCALAR]], #[[$ALL]]], {{.*}} ins(%[[X]], %[[NORM]] : tensor<1024xf32>, tensor<f32>)
// CHECK-NOT: tensor.extract
// CHECK: arith.divf
#all = affine_map<(d0) -> (d0)>
func.func @divide_by_norm(%norm: tensor<f32>, %x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = tensor.extract %norm[] : tensor<f32>
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}

// -----

// A rank-0 constant stays inlined: its element is a constant the body uses.
// CHECK-LABEL: func.func @divide_by_constant(
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024xf32>)
// CHECK: arith.divf %{{.*}}, %[[TWO]] : f32
#all = affine_map<(d0) -> (d0)>
func.func @divide_by_constant(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = tensor.extract %two[] : tensor<f32>
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}
