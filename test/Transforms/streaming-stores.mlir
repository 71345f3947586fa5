// RUN: kforge-opt %s -split-input-file -kforge-streaming-stores | FileCheck %s

// A kernel that asked for streaming stores: its module's NVVM target gets ptxas -dscm=cs, after the options it
// had; the request attribute goes. Its neighbour's module is left as it was.
// CHECK-LABEL: gpu.module @streaming
// CHECK-SAME: flags = {"ptxas-cmd-options" = ["-v", "-dscm=cs"]}
// CHECK-NOT: kforge.streaming_stores
// CHECK-LABEL: gpu.module @plain
// CHECK-SAME: [#nvvm.target<O = 3, chip = "sm_90">]
module attributes {gpu.container_module} {
  gpu.module @streaming [#nvvm.target<O = 3, chip = "sm_90", flags = {"ptxas-cmd-options" = ["-v"]}>] {
    gpu.func @streaming(%a: memref<256xf32>) kernel attributes {kforge.streaming_stores} {
      gpu.return
    }
  }
  gpu.module @plain [#nvvm.target<O = 3, chip = "sm_90">] {
    gpu.func @plain(%a: memref<256xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A target without flags gets the option alone; one that has it already keeps a single copy.
// CHECK-LABEL: gpu.module @bare
// CHECK-SAME: [#nvvm.target<chip = "sm_90", flags = {"ptxas-cmd-options" = ["-dscm=cs"]}>]
// CHECK-LABEL: gpu.module @again
// CHECK-SAME: [#nvvm.target<chip = "sm_90", flags = {"ptxas-cmd-options" = ["-dscm=cs"]}>]
module attributes {gpu.container_module} {
  gpu.module @bare [#nvvm.target<chip = "sm_90">] {
    gpu.func @bare(%a: memref<256xf32>) kernel attributes {kforge.streaming_stores} {
      gpu.return
    }
  }
  gpu.module @again [#nvvm.target<chip = "sm_90", flags = {"ptxas-cmd-options" = ["-dscm=cs"]}>] {
    gpu.func @again(%a: memref<256xf32>) kernel attributes {kforge.streaming_stores} {
      gpu.return
    }
  }
}
