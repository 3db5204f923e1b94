//===- IndexWidth.cpp - 32-bit indices where a kernel's buffers fit -------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATGPUINDEXWIDTH
#include "dat/Conversion/Passes.h.inc"

static constexpr int64_t kInt32Limit = int64_t(1) << 31;
/// The most elements a buffer of a 32-bit kernel may span: a loop over it
/// (its bound, its last step past the end) stays under 2^31.
static constexpr int64_t kMaxElements = int64_t(1) << 30;

/// Whether `type` spans at most 2^30 elements from its base pointer (every
/// dimension, offset and the last element's position); else why not.
static std::optional<std::string> whyNot32Bit(MemRefType type) {
  if (!type.hasStaticShape())
    return "a buffer of dynamic shape";
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return "a buffer of dynamic strides or offset, or not strided";
  if (type.getNumElements() == 0)
    return std::nullopt;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    int64_t step;
    if (stride < 0 || llvm::MulOverflow(size - 1, stride, step) ||
        llvm::AddOverflow(last, step, last))
      return "a buffer past 2^30 elements";
  }
  if (offset < 0 || last >= kMaxElements)
    return "a buffer past 2^30 elements";
  return std::nullopt;
}

/// Why `fn` keeps 64-bit indices, if it does.
static std::optional<std::string> whyNot32Bit(gpu::GPUFuncOp fn,
                                              bool aloneOnly) {
  if (aloneOnly) {
    auto blocks = fn->getAttrOfType<IntegerAttr>(
        NVVM::NVVMDialect::getMinctasmAttrName());
    if (!blocks || blocks.getInt() != 1)
      return "not alone on its SM (nvvm.minctasm is not 1)";
  }
  for (Type type : fn.getArgumentTypes()) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (std::optional<std::string> why = whyNot32Bit(memref))
        return why;
      continue;
    }
    // A wider integer could become an index in the kernel, unchecked.
    if (auto integer = dyn_cast<IntegerType>(type);
        integer && integer.getWidth() > 32)
      return "an integer argument wider than 32 bits";
    if (!isa<IndexType, IntegerType, FloatType>(type))
      return "an argument of type that is not index, integer or float";
  }
  std::optional<ArrayRef<int32_t>> grid = fn.getKnownGridSize();
  std::optional<ArrayRef<int32_t>> block = fn.getKnownBlockSize();
  if (!grid || !block)
    return "a grid or block size not known statically";
  int64_t threads = 1;
  for (int32_t extent : llvm::concat<const int32_t>(*grid, *block))
    if (llvm::MulOverflow(threads, int64_t(extent), threads) ||
        threads >= kInt32Limit)
      return "2^31 threads or more";
  // Constants folded at 64 bits before this pass.
  WalkResult constants = fn.walk([](arith::ConstantIndexOp constant) {
    int64_t v = constant.value();
    return v >= kInt32Limit || v < -kInt32Limit ? WalkResult::interrupt()
                                                : WalkResult::advance();
  });
  if (constants.wasInterrupted())
    return "an index constant outside 32 bits";
  return std::nullopt;
}

/// Asserts on the host, before `launch`, that each of its `index` operands
/// fits the kernel's 32-bit indices.
static void assertIndexOperandsFit(OpBuilder &b, gpu::LaunchFuncOp launch) {
  b.setInsertionPoint(launch);
  Location loc = launch.getLoc();
  for (auto [position, operand] : llvm::enumerate(launch.getKernelOperands())) {
    if (!isa<IndexType>(operand.getType()))
      continue;
    Value wide = arith::IndexCastOp::create(b, loc, b.getI64Type(), operand);
    Value narrow = arith::TruncIOp::create(b, loc, b.getI32Type(), wide);
    Value back = arith::ExtSIOp::create(b, loc, b.getI64Type(), narrow);
    Value fits =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, back, wide);
    cf::AssertOp::create(
        b, loc, fits,
        ("dat: kernel " + launch.getKernelModuleName().getValue() +
         "::" + launch.getKernelName().getValue() + ": index operand " +
         Twine(position) + " does not fit the kernel's 32-bit indices")
            .str());
  }
}

namespace {
struct GPUIndexWidthPass final : impl::DatGPUIndexWidthBase<GPUIndexWidthPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp top = getOperation();
    MLIRContext *context = &getContext();
    DenseSet<StringAttr> narrowed;
    for (auto module : top.getOps<gpu::GPUModuleOp>()) {
      if (module->hasAttr(DLTIDialect::kDataLayoutAttrName))
        continue;
      std::optional<std::string> why = "no kernel";
      for (auto fn : module.getOps<gpu::GPUFuncOp>()) {
        if (!fn.isKernel())
          continue;
        if ((why = whyNot32Bit(fn, !allKernels)))
          break;
      }
      if (why) {
        if (report)
          module.emitRemark()
              << module.getSymName() << ": 64-bit indices: " << *why;
        continue;
      }
      auto entry = DataLayoutEntryAttr::get(
          IndexType::get(context),
          IntegerAttr::get(IntegerType::get(context, 64), 32));
      module->setAttr(DLTIDialect::kDataLayoutAttrName,
                      DataLayoutSpecAttr::get(context, {entry}));
      narrowed.insert(module.getSymNameAttr());
    }
    OpBuilder b(context);
    top.walk([&](gpu::LaunchFuncOp launch) {
      if (narrowed.contains(launch.getKernelModuleName()))
        assertIndexOperandsFit(b, launch);
    });
  }
};

} // namespace
} // namespace mlir::dat
