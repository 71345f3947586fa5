// RUN: rm -rf %t && kforge-opt %s -kforge-dump-gpu-binaries=dir=%t | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/kernels.sm_90.ptx
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: not kforge-opt %s -kforge-dump-gpu-binaries=dir=/dev/null/x 2>&1 | FileCheck %s --check-prefix=ERR

// The IR is left unchanged.
// IR: gpu.binary @kernels
// PTX: .visible .entry kernel()
// FILES: kernels.sm_90.ptx
// FILES: more.sm_80.cubin
// ERR: error: cannot create directory '/dev/null/x'
gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".visible .entry kernel() { ret; }">]
gpu.binary @more [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "\00\01">]
