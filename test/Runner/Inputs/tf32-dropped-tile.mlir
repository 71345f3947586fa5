// The product of tf32-reference.mlir with one K tile of 32 dropped for the first 8 of its 64 rows (A's
// columns 0-31 read as zero there): a pipelining bug that a loose tolerance would let through.
#id = affine_map<(i, j) -> (i, j)>
func.func @product(%a: tensor<64x4096xf32>, %b: tensor<4096x64xf32>) -> tensor<64x64xf32> {
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zerof = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x4096xf32>
  %da = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x4096xf32>) outs(%ea : tensor<64x4096xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %row = arith.cmpi ult, %i, %c8 : index
    %col = arith.cmpi ult, %k, %c32 : index
    %drop = arith.andi %row, %col : i1
    %y = arith.select %drop, %zerof, %x : f32
    linalg.yield %y : f32
  } -> tensor<64x4096xf32>
  %empty = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zerof : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%da, %b : tensor<64x4096xf32>, tensor<4096x64xf32>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
