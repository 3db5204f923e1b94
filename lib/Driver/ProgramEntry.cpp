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

static std::string manifestJson(const std::vector<SignatureEntry> &signature) {
  json::Array args, results;
  for (const SignatureEntry &e : signature) {
    json::Object o{{"name", e.name},
                   {"dtype", e.dtype == "int64" ? "I64" : "F32"},
                   {"shape", json::Array(e.shape)}};
    if (e.kind == SignatureEntry::Output) {
      results.push_back(std::move(o));
      continue;
    }
    o["kind"] = e.kind == SignatureEntry::Weight ? "weight" : "input";
    if (e.range)
      o["range"] = json::Array({e.range->first, e.range->second});
    args.push_back(std::move(o));
  }
  std::string text;
  raw_string_ostream os(text);
  os << json::Value(
      json::Object{{"args", std::move(args)}, {"results", std::move(results)}});
  return text;
}

Error addProgramEntry(ModuleOp module,
                      const std::vector<SignatureEntry> &signature) {
  auto forward = module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_forward");
  if (!forward)
    return createStringError("internal error: no _mlir_ciface_forward after "
                             "lowering");
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);

  std::string manifest = manifestJson(signature);
  manifest.push_back('\0');
  auto arrayTy =
      LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), manifest.size());
  LLVM::GlobalOp::create(b, loc, arrayTy, /*isConstant=*/true,
                         LLVM::Linkage::External, DAT_MANIFEST_SYMBOL,
                         b.getStringAttr(manifest));

  auto entryTy =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, DAT_ENTRY_SYMBOL, entryTy);
  Block *body = entry.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> operands;
  unsigned n = forward.getFunctionType().getNumParams();
  for (unsigned i = 0; i < n; ++i) {
    if (forward.getFunctionType().getParamType(i) != ptr)
      return createStringError("internal error: _mlir_ciface_forward takes a "
                               "non-pointer argument %u",
                               i);
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    operands.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  LLVM::CallOp::create(b, loc, forward, operands);
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return Error::success();
}

} // namespace dat
