//===- WarpMmaToNVVM.cpp - warp MMA vector tiles → nvvm.mma.sync ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Distributes the vector tiles of buildWarpMmaContraction over the 32 lanes
// of a warp, in the fragment layout of PTX's mma.m16n8k16 with bf16
// operands (PTX ISA, "Matrix Fragments for mma.m16n8k16"): with g = lane/4
// and t = lane%4, a lane holds
//   A (16×16): (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)
//   B (n×k, 8×16): (g, 2t..2t+1), (g, 2t+8..)
//   C (16×8): (g, 2t..2t+1), (g+8, 2t..)
// Upstream's vector → nvgpu.mma.sync conversion is the route for f16 and
// tf32; LLVM 22 has no bf16 case in it (nor in nvgpu → NVVM), hence these
// patterns for bf16, to nvvm.mma.sync directly. The lane's loads and stores
// are scalar (any layout, any memory space); ldmatrix from swizzled shared
// memory is the next step.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Conversion/WarpMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUWARPMMATONVVM
#include "dat/Conversion/Passes.h.inc"

namespace {

/// Which MMA operand a vector tile is, by its shape.
enum class Role { A, B, C };

std::optional<Role> roleOf(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.getRank() != 2 || vector.isScalable())
    return std::nullopt;
  ArrayRef<int64_t> shape = vector.getShape();
  if (shape[0] == kWarpMmaM && shape[1] == kWarpMmaK)
    return Role::A;
  if (shape[0] == kWarpMmaN && shape[1] == kWarpMmaK)
    return Role::B;
  if (shape[0] == kWarpMmaM && shape[1] == kWarpMmaN)
    return Role::C;
  return std::nullopt;
}

int64_t fragmentSize(Role role) { return role == Role::A ? 8 : 4; }

/// The (row, column) in its tile of each element of the lane's fragment.
SmallVector<std::pair<Value, Value>>
fragmentCoordinates(OpBuilder &b, Location loc, Role role) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value lane = gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr);
  Value g = arith::DivUIOp::create(b, loc, lane, index(4));
  Value t2 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(4)), index(2));
  auto plus = [&](Value v, int64_t c) -> Value {
    return c ? arith::AddIOp::create(b, loc, v, index(c)).getResult() : v;
  };
  SmallVector<std::pair<Value, Value>> coordinates;
  for (int64_t e = 0, size = fragmentSize(role); e < size; ++e) {
    int64_t reg = e / 2, half = e % 2;
    switch (role) {
    case Role::A:
      coordinates.emplace_back(plus(g, 8 * (reg % 2)),
                               plus(t2, half + 8 * (reg / 2)));
      break;
    case Role::B:
      coordinates.emplace_back(g, plus(t2, half + 8 * reg));
      break;
    case Role::C:
      coordinates.emplace_back(plus(g, 8 * reg), plus(t2, half));
      break;
    }
  }
  return coordinates;
}

/// A tile element's memref indices in a transfer, and whether it lies
/// within the memref (null where the transfer is in bounds).
struct ElementAccess {
  SmallVector<Value> indices;
  Value valid;
};

/// The extent of the memref dim each vector dim of `op` runs along, where
/// the transfer may run past it (null where it is in bounds).
SmallVector<Value, 2> boundsOf(OpBuilder &b, Location loc,
                               VectorTransferOpInterface op, Value base) {
  SmallVector<Value, 2> bounds;
  for (auto [i, result] : llvm::enumerate(op.getPermutationMap().getResults()))
    bounds.push_back(
        op.isDimInBounds(i)
            ? Value()
            : memref::DimOp::create(b, loc, base,
                                    cast<AffineDimExpr>(result).getPosition())
                  .getResult());
  return bounds;
}

/// Where the tile element (row, column) of `op` is, given its `bounds`
/// (boundsOf), and whether it lies inside them.
ElementAccess elementAccess(OpBuilder &b, Location loc,
                            VectorTransferOpInterface op, ValueRange indices,
                            ArrayRef<Value> bounds, Value row, Value column) {
  ElementAccess access{SmallVector<Value>(indices.begin(), indices.end()), {}};
  Value offsets[] = {row, column};
  for (auto [i, result] :
       llvm::enumerate(op.getPermutationMap().getResults())) {
    unsigned dim = cast<AffineDimExpr>(result).getPosition();
    Value &at = access.indices[dim];
    at = isZeroInteger(at) ? offsets[i]
                           : arith::AddIOp::create(b, loc, at, offsets[i]);
    Value size = bounds[i];
    if (!size)
      continue;
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, size);
    access.valid = access.valid
                       ? arith::AndIOp::create(b, loc, access.valid, inside)
                       : inside;
  }
  return access;
}

/// Transfers qualify without masks, from memrefs, with a permutation of two
/// memref dims.
bool isPlainTransfer(VectorTransferOpInterface op) {
  return !op.getMask() && isa<MemRefType>(op.getShapedType()) &&
         op.getPermutationMap().getNumResults() == 2 &&
         llvm::all_of(op.getPermutationMap().getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); });
}

struct ReadFragment final : OpConversionPattern<vector::TransferReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::TransferReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getVectorType());
    if (!role || !isPlainTransfer(op))
      return rewriter.notifyMatchFailure(op, "not an MMA operand tile");
    Location loc = op.getLoc();
    SmallVector<Value, 2> bounds =
        boundsOf(rewriter, loc, op, adaptor.getBase());
    SmallVector<Value> elements;
    for (auto [row, column] : fragmentCoordinates(rewriter, loc, *role)) {
      ElementAccess access = elementAccess(
          rewriter, loc, op, adaptor.getIndices(), bounds, row, column);
      if (!access.valid) {
        elements.push_back(memref::LoadOp::create(
            rewriter, loc, adaptor.getBase(), access.indices));
        continue;
      }
      // Past the end, the padding, and no load: a load at a clamped index
      // would read an element another lane of the warp writes (the
      // accumulators), which compute-sanitizer's racecheck reports.
      auto inside = scf::IfOp::create(
          rewriter, loc, adaptor.getPadding().getType(), access.valid,
          /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(inside.thenBlock());
      scf::YieldOp::create(rewriter, loc,
                           memref::LoadOp::create(
                               rewriter, loc, adaptor.getBase(), access.indices)
                               .getResult());
      rewriter.setInsertionPointToStart(inside.elseBlock());
      scf::YieldOp::create(rewriter, loc, adaptor.getPadding());
      elements.push_back(inside.getResult(0));
    }
    Type fragment = getTypeConverter()->convertType(op.getVectorType());
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, cast<VectorType>(fragment), elements);
    return success();
  }
};

struct WriteFragment final : OpConversionPattern<vector::TransferWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::TransferWriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getVectorType());
    if (role != Role::C || !isPlainTransfer(op))
      return rewriter.notifyMatchFailure(op, "not an MMA accumulator tile");
    Location loc = op.getLoc();
    SmallVector<Value, 2> bounds =
        boundsOf(rewriter, loc, op, adaptor.getBase());
    for (auto [e, coordinate] :
         llvm::enumerate(fragmentCoordinates(rewriter, loc, *role))) {
      Value element = vector::ExtractOp::create(
          rewriter, loc, adaptor.getValueToStore(), static_cast<int64_t>(e));
      ElementAccess access =
          elementAccess(rewriter, loc, op, adaptor.getIndices(), bounds,
                        coordinate.first, coordinate.second);
      OpBuilder::InsertionGuard guard(rewriter);
      if (access.valid) {
        auto inside = scf::IfOp::create(rewriter, loc, access.valid,
                                        /*withElseRegion=*/false);
        rewriter.setInsertionPoint(inside.thenBlock()->getTerminator());
      }
      memref::StoreOp::create(rewriter, loc, element, adaptor.getBase(),
                              access.indices);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// arith.extf / arith.truncf act on fragments element by element.
template <typename Op>
struct ConvertFragmentCast final : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || type == op.getType())
      return failure();
    rewriter.replaceOpWithNewOp<Op>(op, type, adaptor.getIn());
    return success();
  }
};

/// The fragment's bf16 values, as the i32 registers mma.sync takes.
SmallVector<Value> bf16Registers(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  if (!type.getElementType().isBF16()) {
    // f32: the bf16 it was widened from, else rounded to bf16.
    auto ext = fragment.getDefiningOp<arith::ExtFOp>();
    if (ext && getElementTypeOrSelf(ext.getIn().getType()).isBF16())
      fragment = ext.getIn();
    else
      fragment = arith::TruncFOp::create(b, loc, type.clone(b.getBF16Type()),
                                         fragment);
  }
  int64_t count = type.getNumElements() / 2;
  Value words = vector::BitCastOp::create(
      b, loc, VectorType::get({count}, b.getI32Type()), fragment);
  SmallVector<Value> registers;
  for (int64_t i = 0; i < count; ++i)
    registers.push_back(vector::ExtractOp::create(b, loc, words, i));
  return registers;
}

struct ContractToMmaSync final : OpConversionPattern<vector::ContractionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::ContractionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    if (roleOf(op.getLhsType()) != Role::A ||
        roleOf(op.getRhsType()) != Role::B ||
        roleOf(op.getResultType()) != Role::C ||
        op.getKind() != vector::CombiningKind::ADD ||
        op.getIndexingMapsArray() != warpMmaIndexingMaps(ctx) ||
        !llvm::all_of(TypeRange{op.getLhsType(), op.getRhsType()},
                      [](Type t) {
                        Type e = getElementTypeOrSelf(t);
                        return e.isBF16() || e.isF32();
                      }) ||
        !getElementTypeOrSelf(op.getResultType()).isF32())
      return rewriter.notifyMatchFailure(op, "not an m16n8k16 contraction");
    Location loc = op.getLoc();
    SmallVector<Value> a = bf16Registers(rewriter, loc, adaptor.getLhs());
    SmallVector<Value> b = bf16Registers(rewriter, loc, adaptor.getRhs());
    SmallVector<Value> c;
    for (int64_t i = 0; i < 4; ++i)
      c.push_back(
          vector::ExtractOp::create(rewriter, loc, adaptor.getAcc(), i));
    Type f32 = rewriter.getF32Type();
    auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    auto mma = NVVM::MmaOp::create(
        rewriter, loc, result, a, b, c,
        ArrayRef<int64_t>{kWarpMmaM, kWarpMmaN, kWarpMmaK},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
        std::array{NVVM::MMALayout::row, NVVM::MMALayout::col});
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(rewriter, loc, mma, i));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, VectorType::get({4}, f32), d);
    return success();
  }
};

} // namespace

void populateWarpMmaTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](VectorType type) -> Type {
    std::optional<Role> role = roleOf(type);
    if (!role)
      return type;
    return VectorType::get({fragmentSize(*role)}, type.getElementType());
  });
}

void populateWarpMmaToNVVMPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<ReadFragment, WriteFragment, ContractToMmaSync,
               ConvertFragmentCast<arith::ExtFOp>,
               ConvertFragmentCast<arith::TruncFOp>>(converter,
                                                     patterns.getContext());
}

namespace {
struct GPUWarpMmaToNVVMPass final
    : impl::DatGPUWarpMmaToNVVMBase<GPUWarpMmaToNVVMPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    populateWarpMmaTypeConversions(converter);
    RewritePatternSet patterns(ctx);
    populateWarpMmaToNVVMPatterns(converter, patterns);
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    auto legal = [&](Operation *op) { return converter.isLegal(op); };
    target.addDynamicallyLegalOp<vector::TransferReadOp,
                                 vector::TransferWriteOp, vector::ContractionOp,
                                 arith::ExtFOp, arith::TruncFOp>(legal);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::dat
