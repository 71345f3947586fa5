// The ops an importer emits, in one payload, for kforge-compile --sample-outputs (sample-outputs.test): named
// ops the interpreter sees generalized (matmul, transpose, broadcast, fill, reduce), a generic with a keepdim
// reduction (a constant in its output map), linalg.index and tensor.extract in bodies (a gather at an i64
// index argument), reshapes, pad, slices, concat, a dense constant, f64 statistics and bf16 rounding.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#keep = affine_map<(i, j) -> (i, 0)>
func.func @many(%x: tensor<6x8xf32>, %w: tensor<5x8xf32>, %b: tensor<5xf32>, %idx: tensor<6xi64>)
    -> (tensor<6x5xf32>, tensor<6x1xf32>, tensor<12x4xf32>, tensor<6x13xf32>) {
  %zero = arith.constant 0.0 : f32
  %c5 = arith.constant 5 : i64
  // nn.Linear: x @ w^T + b, then GELU's tanh form with powf and a bf16 rounding.
  %wt_e = tensor.empty() : tensor<8x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x8xf32>) outs(%wt_e : tensor<8x5xf32>) permutation = [1, 0]
  %mm_e = tensor.empty() : tensor<6x5xf32>
  %mm_0 = linalg.fill ins(%zero : f32) outs(%mm_e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<6x8xf32>, tensor<8x5xf32>) outs(%mm_0 : tensor<6x5xf32>) -> tensor<6x5xf32>
  %bb = linalg.broadcast ins(%b : tensor<5xf32>) outs(%mm_e : tensor<6x5xf32>) dimensions = [0]
  %lin = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bb : tensor<6x5xf32>, tensor<6x5xf32>) outs(%mm_e : tensor<6x5xf32>) {
  ^bb0(%m: f32, %bias: f32, %o: f32):
    %s = arith.addf %m, %bias : f32
    %three = arith.constant 3.0 : f32
    %c = arith.constant 0.044715 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.7978846 : f32
    %cube = math.powf %s, %three : f32
    %t0 = arith.mulf %c, %cube : f32
    %t1 = arith.addf %s, %t0 : f32
    %t2 = arith.mulf %k, %t1 : f32
    %t3 = math.tanh %t2 : f32
    %t4 = arith.addf %one, %t3 : f32
    %t5 = arith.mulf %half, %s : f32
    %g = arith.mulf %t5, %t4 : f32
    %r = arith.truncf %g : f32 to bf16
    %back = arith.extf %r : bf16 to f32
    linalg.yield %back : f32
  } -> tensor<6x5xf32>
  // A keepdim mean of squares in f64, plus the element each row's index picks (a gather) and its own index.
  %st_e = tensor.empty() : tensor<6x1xf64>
  %zero64 = arith.constant 0.0 : f64
  %st_0 = linalg.fill ins(%zero64 : f64) outs(%st_e : tensor<6x1xf64>) -> tensor<6x1xf64>
  %st = linalg.generic {indexing_maps = [#id2, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xf32>) outs(%st_0 : tensor<6x1xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %v64 = arith.extf %v : f32 to f64
    %sq = arith.mulf %v64, %v64 : f64
    %n = arith.constant 8.0 : f64
    %q = arith.divf %sq, %n : f64
    %a = arith.addf %acc, %q : f64
    linalg.yield %a : f64
  } -> tensor<6x1xf64>
  %pick_e = tensor.empty() : tensor<6x1xf32>
  %pick = linalg.generic {indexing_maps = [affine_map<(i) -> (i, 0)>, affine_map<(i) -> (i, 0)>], iterator_types = ["parallel"]}
      ins(%st : tensor<6x1xf64>) outs(%pick_e : tensor<6x1xf32>) {
  ^bb0(%m: f64, %o: f32):
    %i = linalg.index 0 : index
    %col64 = tensor.extract %idx[%i] : tensor<6xi64>
    %col = arith.index_cast %col64 : i64 to index
    %picked = tensor.extract %lin[%i, %col] : tensor<6x5xf32>
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %m32 = arith.truncf %m : f64 to f32
    %sq = math.sqrt %m32 : f32
    %s = arith.addf %sq, %picked : f32
    %t = arith.addf %s, %if : f32
    linalg.yield %t : f32
  } -> tensor<6x1xf32>
  // Reshapes: 6x8 -> 48 -> 12x4, plus a dense constant.
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<6x8xf32> into tensor<48xf32>
  %resh = tensor.expand_shape %flat [[0, 1]] output_shape [12, 4] : tensor<48xf32> into tensor<12x4xf32>
  %cst = arith.constant dense<[1.0, -2.0, 3.0, -4.0]> : tensor<4xf32>
  %rs_e = tensor.empty() : tensor<12x4xf32>
  %rs = linalg.generic {indexing_maps = [#id2, affine_map<(i, j) -> (j)>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%resh, %cst : tensor<12x4xf32>, tensor<4xf32>) outs(%rs_e : tensor<12x4xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %p = arith.mulf %v, %c : f32
    %e = math.exp %p : f32
    %cmp = arith.cmpf ogt, %p, %zero : f32
    %sel = arith.select %cmp, %e, %p : f32
    linalg.yield %sel : f32
  } -> tensor<12x4xf32>
  // Pad, slice, concat: [pad(x)[1:7, 0:8] | x[:, 3:8]] along columns (8 + 5 = 13).
  %padded = tensor.pad %x low[1, 2] high[1, 0] {
  ^bb0(%p0: index, %p1: index):
    tensor.yield %zero : f32
  } : tensor<6x8xf32> to tensor<8x10xf32>
  %s1 = tensor.extract_slice %padded[1, 0] [6, 8] [1, 1] : tensor<8x10xf32> to tensor<6x8xf32>
  %s2 = tensor.extract_slice %x[0, 3] [6, 5] [1, 1] : tensor<6x8xf32> to tensor<6x5xf32>
  %cat = tensor.concat dim(1) %s1, %s2 : (tensor<6x8xf32>, tensor<6x5xf32>) -> tensor<6x13xf32>
  return %lin, %pick, %rs, %cat : tensor<6x5xf32>, tensor<6x1xf32>, tensor<12x4xf32>, tensor<6x13xf32>
}
