//===- ProgramEntry.cpp - dat_entry and the manifest ----------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The generated `_mlir_ciface_forward` takes one pointer per memref (plus a
// leading result pointer). The runtime's main is generic over models, so it
// calls `dat_entry(void **argv)` instead, which unpacks the pointer array:
// the only model-specific glue, generated here in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "dat/Driver/Driver.h"
#include "dat/Runtime/ProgramABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace mlir;

namespace dat {

static json::Object
signatureJson(const std::vector<SignatureEntry> &signature) {
  json::Array args, results;
  for (const SignatureEntry &e : signature) {
    json::Object o{{"name", e.name},
                   {"dtype", e.dtype == "int64"      ? "I64"
                             : e.dtype == "bfloat16" ? "BF16"
                                                     : "F32"},
                   {"shape", json::Array(e.shape)}};
    if (e.kind == SignatureEntry::Output) {
      results.push_back(std::move(o));
      continue;
    }
    o["kind"] = e.kind == SignatureEntry::Weight  ? "weight"
                : e.kind == SignatureEntry::Cache ? "cache"
                                                  : "input";
    if (e.range)
      o["range"] = json::Array({e.range->first, e.range->second});
    args.push_back(std::move(o));
  }
  return json::Object{{"args", std::move(args)},
                      {"results", std::move(results)}};
}

/// `symbol(void **argv)`: unpacks the pointer array into a call of the
/// C-interface function `ciface`.
static Error addEntry(ModuleOp module, StringRef ciface, StringRef symbol) {
  auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(ciface);
  if (!target)
    return createStringError("internal error: no %s after lowering",
                             ciface.str().c_str());
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto entryTy =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, symbol, entryTy);
  Block *body = entry.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> operands;
  unsigned n = target.getFunctionType().getNumParams();
  for (unsigned i = 0; i < n; ++i) {
    if (target.getFunctionType().getParamType(i) != ptr)
      return createStringError("internal error: %s takes a non-pointer "
                               "argument %u",
                               ciface.str().c_str(), i);
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    operands.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  LLVM::CallOp::create(b, loc, target, operands);
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return Error::success();
}

Error addProgramEntry(ModuleOp module,
                      const std::vector<SignatureEntry> &signature,
                      const std::vector<SignatureEntry> *stepSignature) {
  json::Object manifestObject = signatureJson(signature);
  if (stepSignature)
    manifestObject["step"] = signatureJson(*stepSignature);
  std::string manifest;
  raw_string_ostream os(manifest);
  os << json::Value(std::move(manifestObject));
  manifest.push_back('\0');
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto arrayTy =
      LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), manifest.size());
  LLVM::GlobalOp::create(b, module.getLoc(), arrayTy, /*isConstant=*/true,
                         LLVM::Linkage::External, DAT_MANIFEST_SYMBOL,
                         b.getStringAttr(manifest));
  if (Error e = addEntry(module, "_mlir_ciface_forward", DAT_ENTRY_SYMBOL))
    return e;
  if (stepSignature)
    return addEntry(module, "_mlir_ciface_step", DAT_STEP_SYMBOL);
  return Error::success();
}

} // namespace dat
