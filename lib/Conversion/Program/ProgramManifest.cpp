//===- ProgramManifest.cpp - the manifest the runtime reads ---------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The program's signature travels in the IR (#dat.program_value on the
// entry functions' arguments and results) until this pass writes it as the
// JSON manifest of ProgramABI.h: {"args": [...], "results": [...],
// "step": {...}}, each entry with its name, dtype and shape, arguments with
// their kind and an integer input's accepted range.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatAttrs.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Runtime/ProgramABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/JSON.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPROGRAMMANIFEST
#include "dat/Conversion/Passes.h.inc"
} // namespace mlir::dat

using namespace mlir;
using namespace mlir::dat;

/// The manifest's name of an element type, or null.
static const char *dtypeName(Type type) {
  if (type.isF32())
    return "F32";
  if (type.isBF16())
    return "BF16";
  if (type.isF16())
    return "F16";
  if (type.isInteger(64))
    return "I64";
  return nullptr;
}

/// One argument or result: its #dat.program_value, shape and dtype.
static FailureOr<llvm::json::Object> describe(FunctionOpInterface fn, Type type,
                                              DictionaryAttr attrs,
                                              StringRef what, unsigned index) {
  auto value =
      attrs ? attrs.getAs<ProgramValueAttr>(DatDialect::kProgramValueAttrName)
            : ProgramValueAttr();
  if (!value)
    return fn.emitError() << what << " " << index << " has no #"
                          << DatDialect::kProgramValueAttrName
                          << " (every argument and result of a program's "
                             "entry function says what it is)";
  auto shaped = dyn_cast<ShapedType>(type);
  // A dynamic dimension is one the value's `dims` names, up to its
  // `max_shape`.
  ArrayAttr dims = value.getDims();
  bool described = shaped && shaped.hasRank();
  for (int64_t d = 0; described && d < shaped.getRank(); ++d)
    described = !shaped.isDynamicDim(d) ||
                (dims && dims.size() == static_cast<size_t>(shaped.getRank()) &&
                 !cast<StringAttr>(dims[d]).getValue().empty());
  const char *dtype = described ? dtypeName(shaped.getElementType()) : nullptr;
  if (!dtype)
    return fn.emitError() << what << " " << index << " ('" << value.getName()
                          << "'): " << type
                          << " is not a tensor or memref of f32, bf16, f16 "
                             "or i64 whose dynamic dimensions are named";
  llvm::json::Object o{{"name", value.getName()}, {"dtype", dtype}};
  if (dims) {
    o["shape"] = llvm::json::Array(value.getMaxShape().asArrayRef());
    llvm::json::Array names;
    for (auto [d, name] : llvm::enumerate(dims))
      names.push_back(shaped.isDynamicDim(d)
                          ? cast<StringAttr>(name).getValue().str()
                          : std::string());
    o["dims"] = std::move(names);
  } else {
    o["shape"] = llvm::json::Array(shaped.getShape());
  }
  switch (value.getKind()) {
  case ProgramValueKind::Output:
    return o;
  case ProgramValueKind::Input:
    o["kind"] = "input";
    break;
  case ProgramValueKind::Weight:
    o["kind"] = "weight";
    if (!value.getPermutation().empty())
      o["permutation"] = llvm::json::Array(value.getPermutation());
    if (value.getReferenceShape())
      o["reference_shape"] =
          llvm::json::Array(value.getReferenceShape().asArrayRef());
    break;
  case ProgramValueKind::Cache:
    o["kind"] = "cache";
    break;
  }
  if (value.getMin())
    o["range"] = llvm::json::Array({*value.getMin(), *value.getMax()});
  return o;
}

/// {"args": [...], "results": [...]} of one entry function.
static FailureOr<llvm::json::Object> signature(FunctionOpInterface fn) {
  llvm::json::Array args, results;
  // The arguments, then the results: each described into `out`.
  auto describeAll = [&](TypeRange types, bool result,
                         llvm::json::Array &out) -> LogicalResult {
    for (auto [i, type] : llvm::enumerate(types)) {
      FailureOr<llvm::json::Object> o = describe(
          fn, type, result ? fn.getResultAttrDict(i) : fn.getArgAttrDict(i),
          result ? "result" : "argument", i);
      if (failed(o))
        return failure();
      out.push_back(std::move(*o));
    }
    return success();
  };
  if (failed(describeAll(fn.getArgumentTypes(), false, args)) ||
      failed(describeAll(fn.getResultTypes(), true, results)))
    return failure();
  return llvm::json::Object{{"args", std::move(args)},
                            {"results", std::move(results)}};
}

namespace mlir::dat {
namespace {
struct DatProgramManifest
    : public impl::DatProgramManifestBase<DatProgramManifest> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.lookupSymbol(DAT_MANIFEST_SYMBOL)) {
      module.emitError() << "the module already has a '" << DAT_MANIFEST_SYMBOL
                         << "'";
      return signalPassFailure();
    }
    auto forward = module.lookupSymbol<FunctionOpInterface>("forward");
    if (!forward) {
      module.emitError() << "a program needs an entry function @forward";
      return signalPassFailure();
    }
    FailureOr<llvm::json::Object> manifest = signature(forward);
    if (failed(manifest))
      return signalPassFailure();
    if (auto step = module.lookupSymbol<FunctionOpInterface>("step")) {
      FailureOr<llvm::json::Object> stepSignature = signature(step);
      if (failed(stepSignature))
        return signalPassFailure();
      (*manifest)["step"] = std::move(*stepSignature);
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(*manifest));
    text.push_back('\0');
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto arrayTy = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
    LLVM::GlobalOp::create(b, module.getLoc(), arrayTy, /*isConstant=*/true,
                           LLVM::Linkage::External, DAT_MANIFEST_SYMBOL,
                           b.getStringAttr(text));
  }
};
} // namespace
} // namespace mlir::dat
