// The same product as tf32-reference.mlir with both operands cut to TF32 first (sign, exponent and the top 10
// mantissa bits kept, the low 13 bits dropped): what the tensor cores read of an f32 operand.
#id = affine_map<(i, j) -> (i, j)>
func.func @product(%a: tensor<64x4096xf32>, %b: tensor<4096x64xf32>) -> tensor<64x64xf32> {
  %mask = arith.constant -8192 : i32 // 0xFFFFE000
  %ea = tensor.empty() : tensor<64x4096xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x4096xf32>) outs(%ea : tensor<64x4096xf32>) {
  ^bb0(%x: f32, %o: f32):
    %bits = arith.bitcast %x : f32 to i32
    %cut = arith.andi %bits, %mask : i32
    %y = arith.bitcast %cut : i32 to f32
    linalg.yield %y : f32
  } -> tensor<64x4096xf32>
  %eb = tensor.empty() : tensor<4096x64xf32>
  %tb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4096x64xf32>) outs(%eb : tensor<4096x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %bits = arith.bitcast %x : f32 to i32
    %cut = arith.andi %bits, %mask : i32
    %y = arith.bitcast %cut : i32 to f32
    linalg.yield %y : f32
  } -> tensor<4096x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%ta, %tb : tensor<64x4096xf32>, tensor<4096x64xf32>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
