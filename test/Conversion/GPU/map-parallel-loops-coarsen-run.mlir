// Runs the nests dat-gpu-map-parallel-loops coarsens (several elements a
// thread, every load first, the stores guarded past the last element) on
// the CPU: the mapped loops as plain loops (scf-parallel-for-to-nested-fors),
// each block's threads one after another. Each case counts the elements
// that differ from a plain loop's result, and the elements past the nest's
// end that changed: all zero. (With elements-per-thread=1, the mapping as it
// was, the same.)
//
// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{elements-per-thread=8}),func.func(scf-parallel-for-to-nested-fors),convert-vector-to-scf,convert-scf-to-cf,convert-vector-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{elements-per-thread=1}),func.func(scf-parallel-for-to-nested-fors),convert-vector-to-scf,convert-scf-to-cf,convert-vector-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// And the nests are coarsened (the loads of eight elements before their
// arithmetic and stores):
// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{elements-per-thread=8}))" \
// RUN: | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @main
// IR-COUNT-8: memref.load %{{.+}} : memref<3x700x1001xf32>
// IR-NOT: memref.store
// IR-COUNT-8: arith.mulf
// IR-NOT: memref.store
// IR: scf.if
// IR-NEXT: memref.store %{{.+}} : memref<3x700x1001xf32>

// CHECK: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c700 = arith.constant 700 : index
  %c1001 = arith.constant 1001 : index
  %c1025 = arith.constant 1025 : index
  %cN = arith.constant 1048577 : index
  %cEnd = arith.constant 1048600 : index
  %f1 = arith.constant 1.0 : f32
  %f2 = arith.constant 2.0 : f32
  %f3 = arith.constant 3.0 : f32
  %neg = arith.constant -7.0 : f32

  // 3 × 700 × 1001 elements (2,102,100: not a multiple of a block's 2048),
  // collapsed: b = 2a + 1.
  %a = memref.alloc() : memref<3x700x1001xf32>
  %b = memref.alloc() : memref<3x700x1001xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c700 step %c1 {
      scf.for %k = %c0 to %c1001 step %c1 {
        %x = arith.muli %i, %c700 : index
        %y = arith.addi %x, %j : index
        %z = arith.muli %y, %c1001 : index
        %w = arith.addi %z, %k : index
        %wi = arith.index_cast %w : index to i64
        %wf = arith.sitofp %wi : i64 to f32
        memref.store %wf, %a[%i, %j, %k] : memref<3x700x1001xf32>
        memref.store %neg, %b[%i, %j, %k] : memref<3x700x1001xf32>
      }
    }
  }
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c3, %c700, %c1001) step (%c1, %c1, %c1) {
    %x = memref.load %a[%i, %j, %k] : memref<3x700x1001xf32>
    %y = arith.mulf %x, %f2 : f32
    %z = arith.addf %y, %f1 : f32
    memref.store %z, %b[%i, %j, %k] : memref<3x700x1001xf32>
  }
  %bad0 = scf.for %i = %c0 to %c3 step %c1 iter_args(%n0 = %c0) -> (index) {
    %n1 = scf.for %j = %c0 to %c700 step %c1 iter_args(%m0 = %n0) -> (index) {
      %n2 = scf.for %k = %c0 to %c1001 step %c1 iter_args(%l0 = %m0) -> (index) {
        %x = memref.load %a[%i, %j, %k] : memref<3x700x1001xf32>
        %y = arith.mulf %x, %f2 : f32
        %z = arith.addf %y, %f1 : f32
        %got = memref.load %b[%i, %j, %k] : memref<3x700x1001xf32>
        %ne = arith.cmpf une, %got, %z : f32
        %one = arith.select %ne, %c1, %c0 : index
        %l1 = arith.addi %l0, %one : index
        scf.yield %l1 : index
      }
      scf.yield %n2 : index
    }
    scf.yield %n1 : index
  }
  vector.print %bad0 : index

  // In place, 2^20 + 1 elements of a longer buffer: v = 3v on the first
  // 1,048,577; the 23 after them keep -7.
  %v = memref.alloc() : memref<1048600xf32>
  scf.for %i = %c0 to %cEnd step %c1 {
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %lt = arith.cmpi ult, %i, %cN : index
    %init = arith.select %lt, %if, %neg : f32
    memref.store %init, %v[%i] : memref<1048600xf32>
  }
  scf.parallel (%i) = (%c0) to (%cN) step (%c1) {
    %x = memref.load %v[%i] : memref<1048600xf32>
    %y = arith.mulf %x, %f3 : f32
    memref.store %y, %v[%i] : memref<1048600xf32>
  }
  %bad1 = scf.for %i = %c0 to %cN step %c1 iter_args(%n = %c0) -> (index) {
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %want = arith.mulf %if, %f3 : f32
    %got = memref.load %v[%i] : memref<1048600xf32>
    %ne = arith.cmpf une, %got, %want : f32
    %one = arith.select %ne, %c1, %c0 : index
    %n1 = arith.addi %n, %one : index
    scf.yield %n1 : index
  }
  vector.print %bad1 : index
  %past = scf.for %i = %cN to %cEnd step %c1 iter_args(%n = %c0) -> (index) {
    %got = memref.load %v[%i] : memref<1048600xf32>
    %ne = arith.cmpf une, %got, %neg : f32
    %one = arith.select %ne, %c1, %c0 : index
    %n1 = arith.addi %n, %one : index
    scf.yield %n1 : index
  }
  vector.print %past : index

  // A broadcast input (a bias along the rows) and two outputs, 1024 × 1025:
  // s = x + bias[j], d = x - bias[j].
  %x2 = memref.alloc() : memref<1024x1025xf32>
  %bias = memref.alloc() : memref<1025xf32>
  %s = memref.alloc() : memref<1024x1025xf32>
  %d = memref.alloc() : memref<1024x1025xf32>
  %c1024 = arith.constant 1024 : index
  scf.for %j = %c0 to %c1025 step %c1 {
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %jb = arith.mulf %jf, %f3 : f32
    memref.store %jb, %bias[%j] : memref<1025xf32>
  }
  scf.for %i = %c0 to %c1024 step %c1 {
    scf.for %j = %c0 to %c1025 step %c1 {
      %ii = arith.index_cast %i : index to i64
      %if = arith.sitofp %ii : i64 to f32
      memref.store %if, %x2[%i, %j] : memref<1024x1025xf32>
      memref.store %neg, %s[%i, %j] : memref<1024x1025xf32>
      memref.store %neg, %d[%i, %j] : memref<1024x1025xf32>
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1025) step (%c1, %c1) {
    %x = memref.load %x2[%i, %j] : memref<1024x1025xf32>
    %bj = memref.load %bias[%j] : memref<1025xf32>
    %sum = arith.addf %x, %bj : f32
    %dif = arith.subf %x, %bj : f32
    memref.store %sum, %s[%i, %j] : memref<1024x1025xf32>
    memref.store %dif, %d[%i, %j] : memref<1024x1025xf32>
  }
  %bad2:2 = scf.for %i = %c0 to %c1024 step %c1 iter_args(%n = %c0, %m = %c0) -> (index, index) {
    %r:2 = scf.for %j = %c0 to %c1025 step %c1 iter_args(%p = %n, %q = %m) -> (index, index) {
      %x = memref.load %x2[%i, %j] : memref<1024x1025xf32>
      %bj = memref.load %bias[%j] : memref<1025xf32>
      %sum = arith.addf %x, %bj : f32
      %dif = arith.subf %x, %bj : f32
      %gs = memref.load %s[%i, %j] : memref<1024x1025xf32>
      %gd = memref.load %d[%i, %j] : memref<1024x1025xf32>
      %ns = arith.cmpf une, %gs, %sum : f32
      %nd = arith.cmpf une, %gd, %dif : f32
      %os = arith.select %ns, %c1, %c0 : index
      %od = arith.select %nd, %c1, %c0 : index
      %p1 = arith.addi %p, %os : index
      %q1 = arith.addi %q, %od : index
      scf.yield %p1, %q1 : index, index
    }
    scf.yield %r#0, %r#1 : index, index
  }
  vector.print %bad2#0 : index
  vector.print %bad2#1 : index
  return
}
