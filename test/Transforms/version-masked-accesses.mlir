// A partial tile's masked accesses get an unmasked path for when every lane of the mask is on (the full tiles):
// scf.if on the mask's AND, the plain access in the then-branch, the masked one as it was in the else-branch.
// RUN: kforge-opt %s --pass-pipeline='builtin.module(gpu.module(kforge-version-masked-accesses))' | FileCheck %s

gpu.module @kernels {
  // CHECK-LABEL: func.func @tile
  func.func @tile(%a: memref<257x1000xf32>, %b: memref<1000xf32>, %i: index, %j: index, %n: index) {
    %pad = arith.constant 0.0 : f32
    %zero = arith.constant dense<0.0> : vector<4xf32>
    %mask = vector.create_mask %n : vector<4xi1>
    // CHECK:      %[[MASK:.*]] = vector.create_mask
    // CHECK:      %[[ALL:.*]] = vector.reduction <and>, %[[MASK]] : vector<4xi1> into i1
    // CHECK-NEXT: %[[ROW:.*]] = scf.if %[[ALL]] -> (vector<4xf32>) {
    // CHECK-NEXT:   %[[PLAIN:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<257x1000xf32>, vector<4xf32>
    // CHECK-NEXT:   scf.yield %[[PLAIN]]
    // CHECK-NEXT: } else {
    // CHECK-NEXT:   %[[MASKED:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}, %[[MASK]] {in_bounds = [true]}
    // CHECK-NEXT:   scf.yield %[[MASKED]]
    %row = vector.transfer_read %a[%i, %j], %pad, %mask {in_bounds = [true]} : memref<257x1000xf32>, vector<4xf32>
    // CHECK:      scf.if %{{.*}} -> (vector<4xf32>) {
    // CHECK-NEXT:   vector.load %{{.*}}[%{{.*}}] : memref<1000xf32>, vector<4xf32>
    // CHECK:      } else {
    // CHECK-NEXT:   vector.maskedload
    %bias = vector.maskedload %b[%j], %mask, %zero : memref<1000xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
    %sum = arith.addf %row, %bias : vector<4xf32>
    // CHECK:      arith.addf %[[ROW]]
    // CHECK:      scf.if %{{.*}} {
    // CHECK-NEXT:   vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {in_bounds = [true]} : vector<4xf32>, memref<257x1000xf32>
    // CHECK-NEXT: } else {
    // CHECK-NEXT:   vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}], %[[MASK]] {in_bounds = [true]}
    // CHECK-NEXT: }
    vector.transfer_write %sum, %a[%i, %j], %mask {in_bounds = [true]} : vector<4xf32>, memref<257x1000xf32>
    // CHECK:      scf.if %{{.*}} {
    // CHECK-NEXT:   vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<1000xf32>, vector<4xf32>
    // CHECK-NEXT: } else {
    // CHECK-NEXT:   vector.maskedstore
    // CHECK-NEXT: }
    vector.maskedstore %b[%j], %mask, %sum : memref<1000xf32>, vector<4xi1>, vector<4xf32>
    // An unmasked access is left alone.
    // CHECK:      vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<257x1000xf32>, vector<4xf32>
    // CHECK-NEXT: return
    %plain = vector.transfer_read %a[%i, %j], %pad {in_bounds = [true]} : memref<257x1000xf32>, vector<4xf32>
    return
  }
}
