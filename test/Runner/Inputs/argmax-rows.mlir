// argmax over each row's 40 columns, as torch-mlir imports torch.argmax(x, dim=1): i64 indices.
func.func @argmax(%x: tensor<16x40xf32>) -> tensor<16xi64> {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %ei = tensor.empty() : tensor<16xi64>
  %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<16xi64>) -> tensor<16xi64>
  %ev = tensor.empty() : tensor<16xf32>
  %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<16xf32>) -> tensor<16xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x40xf32>) outs(%fv, %fi : tensor<16xf32>, tensor<16xi64>) {
  ^bb0(%in: f32, %best: f32, %at: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %m = arith.maximumf %in, %best : f32
    %gt = arith.cmpf ogt, %in, %best : f32
    %s = arith.select %gt, %ji, %at : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<16xf32>, tensor<16xi64>)
  return %r#1 : tensor<16xi64>
}
