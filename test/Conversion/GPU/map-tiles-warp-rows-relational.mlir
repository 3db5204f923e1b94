// RUN: dat-opt %s --dat-gpu-map-tiles | FileCheck %s --check-prefix=GPU
// RUN: dat-opt %s --dat-gpu-map-tiles="emulate=true" | FileCheck %s --check-prefix=EMU
// RUN: dat-opt %s --dat-gpu-map-tiles | dat-opt --gpu-kernel-outlining --dat-gpu-warp-mma-to-nvvm --canonicalize \
// RUN: | FileCheck %s --check-prefix=NVVM --implicit-check-not="vector<16x8xf32>"

// A relational attention tile as dat-decompose-flash writes it (bf16, 16
// query rows, 2 heads and 2 relations of 16, relu relations, key blocks of
// 32 over 48 keys: the second is partial). The relation tile r[ℓ, i, j] is
// read by every head (Σ_j α[h, i, j] · r[ℓ, i, j]), so it cannot live in one
// warp's registers: it is staged, the block computing it into shared memory
// (its contraction as warp MMA tiles, the scale and relu on their
// accumulators, then a barrier). Everything else takes FlashAttention-2's
// structure: a warp per head (64 threads), the scores, row maxima and sums, the output and the
// relation accumulator [h, i, ℓ] in registers through the key loop; each
// warp reads its rows of every relation's tile from shared memory in 16×8
// tiles, reduces α · r over the keys (the tiles elementwise, then one
// vector.multi_reduction per relation) and puts relation ℓ's sums in column
// ℓ of its accumulator tile. After the loop, the relations' output
// projection (wr) is an MMA with the normalized accumulator as A.

// GPU-LABEL: func.func @relational
// GPU: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c64,
// GPU: %[[TID:.+]] = gpu.thread_id x
// GPU: %[[WARP:.+]] = arith.divui %[[TID]], %c32
// GPU: %[[ROW:.+]] = arith.muli %{{.+}}, %c16
// GPU: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>)
// GPU:   vector.multi_reduction <maximumf>, %{{.+}}, %{{.+}} [1] : vector<16x8xf32> to vector<16xf32>
// GPU:   vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<16x8xf32> to vector<16xf32>
// The relation tile, block-wide: its warp MMA tiles from zeros (the zero
// fill before it taken in), the scale and the relu applied to the
// accumulators before they are written (not passes of their own over the
// tile), then one barrier.
// GPU:   arith.constant dense<0.000000e+00> : vector<16x8xf32>
// GPU:   vector.contract
// GPU:   arith.mulf {{.*}} : vector<16x8xf32>
// GPU:   arith.maximumf {{.*}} : vector<16x8xf32>
// GPU:   vector.transfer_write {{.*}} : vector<16x8xf32>, memref<1x2x16x?xf32>
// GPU:   gpu.barrier
// GPU-NOT: arith.maximumf {{.*}} : f32
// P·V from registers:
// GPU:   vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [0, 8], strides = [1, 1]} : vector<16x8xbf16> into vector<16x16xbf16>
// GPU:   vector.contract
// Relation 0, then 1: the warp's rows of its tile (4 tiles of 8 keys),
// masked past the block's keys, one row reduction, into column ℓ.
// GPU:   vector.transfer_read %[[REL:.+]][%{{.+}}, %c0{{.*}}, %[[ROW]], %c0{{.*}}], %{{.+}} {in_bounds = [true, false]} : memref<1x2x16x?xf32>, vector<16x8xf32>
// GPU:   vector.transfer_read %[[REL]][%{{.+}}, %c0{{.*}}, %[[ROW]], %c24{{.*}}], %{{.+}} {in_bounds = [true, false]} : memref<1x2x16x?xf32>, vector<16x8xf32>
// GPU:   vector.create_mask
// GPU:   vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<16x8xf32> to vector<16xf32>
// GPU:   arith.cmpi eq, %{{.+}}, %{{.+}} : vector<16x8xindex>
// GPU:   vector.transfer_read %[[REL]][%{{.+}}, %c1{{.*}}, %[[ROW]], %c0{{.*}}], %{{.+}} {in_bounds = [true, false]} : memref<1x2x16x?xf32>, vector<16x8xf32>
// GPU:   vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<16x8xf32> to vector<16xf32>
// GPU:   arith.cmpi eq, %{{.+}}, %{{.+}} : vector<16x8xindex>
// GPU-NOT: gpu.barrier
// GPU:   scf.yield
// GPU: arith.divf {{.*}} : vector<16x8xf32>
// GPU: vector.contract
// GPU: vector.transfer_write
// GPU-NOT: linalg.generic
// GPU: gpu.terminator

// Emulated: the 2 warps one after another, each through the whole body.
// EMU-LABEL: func.func @relational
// EMU: scf.for %[[W:.+]] = %c0{{.*}} to %c2{{.*}} step %c1
// EMU:   scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>)
// EMU:     vector.transfer_read %{{.+}} : memref<1x2x16x?xf32>, vector<16x8xf32>

// On the lanes: mma.sync, and the row reductions across the row's 4 lanes
// (2 rows × 2 shuffles each: maximum, sum, two relations).
// NVVM-LABEL: gpu.func @relational_relational_attention_tile
// NVVM-SAME: known_block_size = array<i32: 64, 1, 1>
// NVVM: nvvm.mma.sync
// NVVM-COUNT-16: gpu.shuffle xor
// NVVM-NOT: gpu.shuffle
// NVVM: gpu.return

func.func @relational(%expand_shape: memref<1x48x2x16xbf16>, %expand_shape_11: memref<1x48x2x16xbf16>,
                       %expand_shape_17: memref<1x48x2x16xbf16>, %expand_shape_23: memref<1x48x2x16xbf16>,
                       %expand_shape_31: memref<1x48x2x16xbf16>, %arg7: memref<2x16x2xbf16>,
                       %alloc_32: memref<1x2x48x16xbf16>) {
  %cst = arith.constant 2.500000e-01 : f32
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 0xFF800000 : f32
  %cst_1 = arith.constant 0.000000e+00 : f32
  scf.forall (%arg9) = (0) to (48) step (16) {
    %subview = memref.subview %expand_shape[0, %arg9, 0, 0] [1, 16, 2, 16] [1, 1, 1, 1] : memref<1x48x2x16xbf16> to memref<1x16x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>
    %alloc_41 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16x16xbf16>
    linalg.transpose ins(%subview : memref<1x16x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>) outs(%alloc_41 : memref<1x2x16x16xbf16>) permutation = [0, 2, 1, 3] 
    %subview_42 = memref.subview %expand_shape_17[0, %arg9, 0, 0] [1, 16, 2, 16] [1, 1, 1, 1] : memref<1x48x2x16xbf16> to memref<1x16x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>
    %alloc_43 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16x16xbf16>
    linalg.transpose ins(%subview_42 : memref<1x16x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>) outs(%alloc_43 : memref<1x2x16x16xbf16>) permutation = [0, 2, 1, 3] 
    %subview_44 = memref.subview %alloc_32[0, 0, %arg9, 0] [1, 2, 16, 16] [1, 1, 1, 1] : memref<1x2x48x16xbf16> to memref<1x2x16x16xbf16, strided<[1536, 768, 16, 1], offset: ?>>
    %alloc_45 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16xf32>
    linalg.fill ins(%cst_0 : f32) outs(%alloc_45 : memref<1x2x16xf32>)
    %alloc_46 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc_46 : memref<1x2x16xf32>)
    %alloc_47 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16x16xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc_47 : memref<1x2x16x16xf32>)
    %alloc_48 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16x2xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc_48 : memref<1x2x16x2xf32>)
    scf.for %arg10 = %c0 to %c48 step %c32 {
      %0 = affine.min affine_map<(d0) -> (-d0 + 48, 32)>(%arg10)
      %subview_51 = memref.subview %expand_shape_11[0, %arg10, 0, 0] [1, %0, 2, 16] [1, 1, 1, 1] : memref<1x48x2x16xbf16> to memref<1x?x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>
      %alloc_52 = memref.alloc(%0) {alignment = 64 : i64} : memref<1x2x?x16xbf16>
      linalg.transpose ins(%subview_51 : memref<1x?x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>) outs(%alloc_52 : memref<1x2x?x16xbf16>) permutation = [0, 2, 1, 3] 
      %alloc_53 = memref.alloc(%0) {alignment = 64 : i64} : memref<1x2x16x?xf32>
      linalg.fill ins(%cst_1 : f32) outs(%alloc_53 : memref<1x2x16x?xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%alloc_41, %alloc_52 : memref<1x2x16x16xbf16>, memref<1x2x?x16xbf16>) outs(%alloc_53 : memref<1x2x16x?xf32>) {
      ^bb0(%in: bf16, %in_62: bf16, %out: f32):
        %1 = arith.extf %in_62 : bf16 to f32
        %2 = arith.extf %in : bf16 to f32
        %3 = arith.mulf %2, %1 : f32
        %4 = arith.addf %out, %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%alloc_53 : memref<1x2x16x?xf32>) {
      ^bb0(%out: f32):
        %1 = arith.mulf %out, %cst : f32
        linalg.yield %1 : f32
      }
      %alloc_54 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16xf32>
      linalg.fill ins(%cst_0 : f32) outs(%alloc_54 : memref<1x2x16xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%alloc_53 : memref<1x2x16x?xf32>) outs(%alloc_54 : memref<1x2x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.maximumf %in, %out : f32
        linalg.yield %1 : f32
      }
      %alloc_55 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16xf32>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc_45, %alloc_54 : memref<1x2x16xf32>, memref<1x2x16xf32>) outs(%alloc_55 : memref<1x2x16xf32>) {
      ^bb0(%in: f32, %in_62: f32, %out: f32):
        %1 = arith.maximumf %in, %in_62 : f32
        %2 = arith.cmpf oeq, %1, %cst_0 : f32
        %3 = arith.select %2, %cst_1, %1 : f32
        %4 = arith.subf %in, %3 : f32
        %5 = math.exp %4 : f32
        linalg.yield %5 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc_54 : memref<1x2x16xf32>) outs(%alloc_45 : memref<1x2x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.maximumf %out, %in : f32
        linalg.yield %1 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_45 : memref<1x2x16xf32>) outs(%alloc_53 : memref<1x2x16x?xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.cmpf oeq, %in, %cst_0 : f32
        %2 = arith.select %1, %cst_1, %in : f32
        %3 = arith.subf %out, %2 : f32
        %4 = math.exp %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc_55 : memref<1x2x16xf32>) outs(%alloc_46 : memref<1x2x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.mulf %out, %in : f32
        linalg.yield %1 : f32
      }
      %alloc_56 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16xf32>
      linalg.fill ins(%cst_1 : f32) outs(%alloc_56 : memref<1x2x16xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%alloc_53 : memref<1x2x16x?xf32>) outs(%alloc_56 : memref<1x2x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.addf %in, %out : f32
        linalg.yield %1 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alloc_56 : memref<1x2x16xf32>) outs(%alloc_46 : memref<1x2x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.addf %out, %in : f32
        linalg.yield %1 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_55 : memref<1x2x16xf32>) outs(%alloc_47 : memref<1x2x16x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.mulf %out, %in : f32
        linalg.yield %1 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_55 : memref<1x2x16xf32>) outs(%alloc_48 : memref<1x2x16x2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.mulf %out, %in : f32
        linalg.yield %1 : f32
      }
      %subview_57 = memref.subview %expand_shape_23[0, %arg10, 0, 0] [1, %0, 2, 16] [1, 1, 1, 1] : memref<1x48x2x16xbf16> to memref<1x?x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>
      %alloc_58 = memref.alloc(%0) {alignment = 64 : i64} : memref<1x2x?x16xbf16>
      linalg.transpose ins(%subview_57 : memref<1x?x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>) outs(%alloc_58 : memref<1x2x?x16xbf16>) permutation = [0, 2, 1, 3] 
      %alloc_59 = memref.alloc(%0) {alignment = 64 : i64} : memref<1x2x16x?xf32>
      linalg.fill ins(%cst_1 : f32) outs(%alloc_59 : memref<1x2x16x?xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%alloc_43, %alloc_58 : memref<1x2x16x16xbf16>, memref<1x2x?x16xbf16>) outs(%alloc_59 : memref<1x2x16x?xf32>) {
      ^bb0(%in: bf16, %in_62: bf16, %out: f32):
        %1 = arith.extf %in_62 : bf16 to f32
        %2 = arith.extf %in : bf16 to f32
        %3 = arith.mulf %2, %1 : f32
        %4 = arith.addf %out, %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%alloc_59 : memref<1x2x16x?xf32>) {
      ^bb0(%out: f32):
        %1 = arith.mulf %out, %cst : f32
        %2 = arith.maximumf %1, %cst_1 : f32
        linalg.yield %2 : f32
      }
      %subview_60 = memref.subview %expand_shape_31[0, %arg10, 0, 0] [1, %0, 2, 16] [1, 1, 1, 1] : memref<1x48x2x16xbf16> to memref<1x?x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>
      %alloc_61 = memref.alloc(%0) {alignment = 64 : i64} : memref<1x2x?x16xbf16>
      linalg.transpose ins(%subview_60 : memref<1x?x2x16xbf16, strided<[1536, 32, 16, 1], offset: ?>>) outs(%alloc_61 : memref<1x2x?x16xbf16>) permutation = [0, 2, 1, 3] 
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%alloc_53, %alloc_61 : memref<1x2x16x?xf32>, memref<1x2x?x16xbf16>) outs(%alloc_47 : memref<1x2x16x16xf32>) {
      ^bb0(%in: f32, %in_62: bf16, %out: f32):
        %1 = arith.extf %in_62 : bf16 to f32
        %2 = arith.mulf %in, %1 : f32
        %3 = arith.addf %out, %2 : f32
        linalg.yield %3 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%alloc_53, %alloc_59 : memref<1x2x16x?xf32>, memref<1x2x16x?xf32>) outs(%alloc_48 : memref<1x2x16x2xf32>) {
      ^bb0(%in: f32, %in_62: f32, %out: f32):
        %1 = arith.mulf %in, %in_62 : f32
        %2 = arith.addf %out, %1 : f32
        linalg.yield %2 : f32
      }
      memref.dealloc %alloc_52 : memref<1x2x?x16xbf16>
      memref.dealloc %alloc_53 : memref<1x2x16x?xf32>
      memref.dealloc %alloc_54 : memref<1x2x16xf32>
      memref.dealloc %alloc_55 : memref<1x2x16xf32>
      memref.dealloc %alloc_56 : memref<1x2x16xf32>
      memref.dealloc %alloc_58 : memref<1x2x?x16xbf16>
      memref.dealloc %alloc_59 : memref<1x2x16x?xf32>
      memref.dealloc %alloc_61 : memref<1x2x?x16xbf16>
    }
    %alloc_49 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16x16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_47, %alloc_46 : memref<1x2x16x16xf32>, memref<1x2x16xf32>) outs(%alloc_49 : memref<1x2x16x16xf32>) {
    ^bb0(%in: f32, %in_51: f32, %out: f32):
      %0 = arith.cmpf oeq, %in_51, %cst_1 : f32
      %1 = arith.divf %in, %in_51 : f32
      %2 = arith.select %0, %cst_1, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_50 = memref.alloc() {alignment = 64 : i64} : memref<1x2x16x2xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_48, %alloc_46 : memref<1x2x16x2xf32>, memref<1x2x16xf32>) outs(%alloc_50 : memref<1x2x16x2xf32>) {
    ^bb0(%in: f32, %in_51: f32, %out: f32):
      %0 = arith.cmpf oeq, %in_51, %cst_1 : f32
      %1 = arith.divf %in, %in_51 : f32
      %2 = arith.select %0, %cst_1, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%alloc_50, %arg7 : memref<1x2x16x2xf32>, memref<2x16x2xbf16>) outs(%alloc_49 : memref<1x2x16x16xf32>) {
    ^bb0(%in: f32, %in_51: bf16, %out: f32):
      %0 = arith.extf %in_51 : bf16 to f32
      %1 = arith.mulf %in, %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_49 : memref<1x2x16x16xf32>) outs(%subview_44 : memref<1x2x16x16xbf16, strided<[1536, 768, 16, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: bf16):
      %0 = arith.truncf %in : f32 to bf16
      linalg.yield %0 : bf16
    }
    memref.dealloc %alloc_41 : memref<1x2x16x16xbf16>
    memref.dealloc %alloc_43 : memref<1x2x16x16xbf16>
    memref.dealloc %alloc_45 : memref<1x2x16xf32>
    memref.dealloc %alloc_46 : memref<1x2x16xf32>
    memref.dealloc %alloc_47 : memref<1x2x16x16xf32>
    memref.dealloc %alloc_48 : memref<1x2x16x2xf32>
    memref.dealloc %alloc_49 : memref<1x2x16x16xf32>
    memref.dealloc %alloc_50 : memref<1x2x16x2xf32>
  } {dat.origin = "dat.relational_attention"}
  return
}
