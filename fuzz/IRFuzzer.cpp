//===- IRFuzzer.cpp - fuzz parsing and verification of dat IR -------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Any text is parsed as a module with every dialect dat-opt knows and
// verified: errors are diagnostics, never a crash in a dat verifier, parser
// or printer. Modules that verify are printed and parsed again, then given
// to the module passes that rewrite any IR they are handed
// (dat-narrow-storage, dat-gemm-library-calls): each either fails with a
// diagnostic or leaves IR that verifies.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::registerAllDialects(*r);
    mlir::dat::registerAllDialects(*r);
    return r;
  }();
  mlir::MLIRContext ctx(*registry);
  ctx.allowUnregisteredDialects(false);
  // Diagnostics are expected; keep them off stderr.
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  // MLIR's lexer reads the terminating NUL of its buffer: give it a copy
  // (libFuzzer's input ends exactly at `size`).
  std::string owned(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(owned.c_str(), owned.size());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  if (std::getenv("DAT_FUZZ_VERBOSE"))
    std::fprintf(stderr, "fuzz-ir: an input verified\n");
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  mlir::OwningOpRef<mlir::ModuleOp> again =
      mlir::parseSourceString<mlir::ModuleOp>(printed, &ctx);
  if (!again)
    std::abort(); // what verifies must round-trip
  if (mlir::succeeded(mlir::dat::narrowFloatStorage(
          *again, mlir::BFloat16Type::get(&ctx))) &&
      mlir::failed(mlir::verify(*again)))
    std::abort(); // a pass that succeeds must leave valid IR
  if (mlir::succeeded(mlir::dat::outlineProjectionGemms(*module)) &&
      mlir::failed(mlir::verify(*module)))
    std::abort();
  return 0;
}
