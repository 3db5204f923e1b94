// RUN: dat-opt %s --dat-gpu-strip-compile-times | FileCheck %s

// The timings gpu-module-to-binary records are dropped, other properties
// and the object itself kept.
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target, properties = {O = 3 : i32}, "BLOB">, #gpu.object<#nvvm.target, "BLOB2">]
gpu.binary @kernels [
  #gpu.object<#nvvm.target, properties = {ISAToBinaryTimeInMs = 29 : i64, LLVMIRToISATimeInMs = 2 : i64, O = 3 : i32}, "BLOB">,
  #gpu.object<#nvvm.target, properties = {ISAToBinaryTimeInMs = 1 : i64}, "BLOB2">
]
