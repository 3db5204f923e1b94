//===- DatBase.td - dat dialect definition -----------------*- tablegen -*-===//
//
// The dat dialect: relational-attention models as first-class IR.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_IR_DATBASE_TD
#define DAT_DIALECT_DAT_IR_DATBASE_TD

include "mlir/IR/OpBase.td"

def Dat_Dialect : Dialect {
  let name = "dat";
  let cppNamespace = "::mlir::dat";
  let summary = "Relational and dual attention, HYLA and algebraic positional "
                "encodings as first-class ops";
  let description = [{
    The `dat` dialect models the attention family of Dual Attention
    Transformers (relational attention, symbol retrieval, dual attention),
    hypernetwork attention (HYLA) and algebraic positional encodings at the
    level of whole attention computations on tensors. Keeping these
    computations as single ops lets the compiler fuse and tile them
    flash-style, so that no N×N (or N×N×R, N×N×d) intermediate ever reaches
    memory.

    Attention-family ops are in destination-passing style (an `outs` operand
    provides the result's shape and storage) and implement `TilingInterface`
    over their parallel dimensions.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let usePropertiesForAttributes = 1;
  let useDefaultAttributePrinterParser = 1;
  // `dat.program_value` on entry function arguments and results.
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // The attributes passes put on ops of other dialects; verified by
  // DatDialect::verifyOperationAttribute.
  let discardableAttrs = (ins
    // On an `scf.forall`: a tile loop, one iteration per tile, made by a dat
    // tiling pass (dat-tile-attention, dat-fuse-epilogues, dat-register-tiles)
    // for the op it names ("dat.attention", "projection + epilogue", ...).
    // What maps tiles onto GPU blocks (dat-gpu-map-tiles) or threads takes
    // exactly these loops; `prog --profile` names them by it.
    "::mlir::StringAttr":$origin,
    // On an elementwise `linalg.generic` whose operands are per position and
    // whose result is per pair (APE's distance decay): computed per tile where
    // attention tiles slice it, so that the whole result never exists.
    "::mlir::UnitAttr":$recompute_per_tile,
    // On the tile loop dat-peel-tile-loops split off another (its partial
    // last tiles): its tiles are disjoint from those of the loop whose result
    // it continues, so a tile it slices from that output was never written.
    "::mlir::UnitAttr":$rest_of_split,
    // On an attention tile loop whose partial last tile dat-peel-tile-loops
    // replaced by a full one ending at the last row (overlapping the tile
    // before it; only its rows past that tile are inserted).
    "::mlir::UnitAttr":$overlapped_last_tile,
    // On a host `memref.alloc` of a GPU program: a buffer only the host uses
    // (dat-gpu-device-copies' host copies); it stays in host memory.
    "::mlir::UnitAttr":$host_memory,
    // On a `memref.view` of a block-wide tile's shared memory
    // (dat-gpu-map-tiles): dat-gpu-swizzle-shared-tiles adds its outer
    // indices to each row's swizzle key.
    "::mlir::UnitAttr":$swizzle_outer_dims
  );
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The argument/result attribute naming what a program value is.
    static constexpr ::llvm::StringLiteral kProgramValueAttrName =
        "dat.program_value";
  }];
}

// Base class of every dat op: injects the dialect.
class Dat_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dat_Dialect, mnemonic, traits>;

#endif // DAT_DIALECT_DAT_IR_DATBASE_TD
