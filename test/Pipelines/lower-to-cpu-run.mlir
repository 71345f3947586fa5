// RUN: kforge-opt %s --kforge-lower-to-cpu | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s

// Runs a payload in importer form (returns its result) through the CPU pipeline and checks the numbers:
// relu(A * B + bias) with A = [[1, 2], [3, 4]], B = [[1, -1], [1, 1]], bias = [0.5, -10].
// A * B = [[3, 1], [7, 1]]; + bias = [[3.5, -9], [7.5, -9]]; relu = [[3.5, 0], [7.5, 0]].
// CHECK: [3.5,   0]
// CHECK-NEXT: [7.5,   0]
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @gemm_bias_relu(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %bias: tensor<2xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x2xf32>) -> tensor<2x2xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<2x2xf32>, tensor<2xf32>) outs(%empty : tensor<2x2xf32>) {
  ^bb0(%x: f32, %bv: f32, %o: f32):
    %s = arith.addf %x, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

func.func @main() {
  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[1.0, -1.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %bias = arith.constant dense<[0.5, -10.0]> : tensor<2xf32>
  %y = func.call @gemm_bias_relu(%a, %b, %bias) : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %buffer = bufferization.to_buffer %y : tensor<2x2xf32> to memref<2x2xf32>
  %unranked = memref.cast %buffer : memref<2x2xf32> to memref<*xf32>
  func.call @printMemrefF32(%unranked) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
