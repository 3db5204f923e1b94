// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-program-entry | FileCheck %s

// dat_entry(void **argv) loads one pointer per parameter of the C interface
// and calls it; dat_step does the same for the decode step.
// CHECK-LABEL: llvm.func @dat_entry(%{{.*}}: !llvm.ptr)
// CHECK-COUNT-2: llvm.getelementptr
// CHECK: llvm.call @_mlir_ciface_forward(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-LABEL: llvm.func @dat_step(%{{.*}}: !llvm.ptr)
// CHECK: llvm.getelementptr
// CHECK: llvm.call @_mlir_ciface_step(%{{.*}}) : (!llvm.ptr) -> ()
llvm.func @_mlir_ciface_forward(!llvm.ptr, !llvm.ptr)
llvm.func @_mlir_ciface_step(!llvm.ptr)

// -----

// expected-error @+1 {{no _mlir_ciface_forward: run after the conversion to LLVM, with C interfaces requested}}
module {
  llvm.func @forward(!llvm.ptr)
}

// -----

// expected-error @+1 {{parameter 1 is not a pointer}}
llvm.func @_mlir_ciface_forward(!llvm.ptr, i64)
