//===- Frontend.h - a model description → the program's IR ------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_FRONTEND_H
#define DAT_FRONTEND_FRONTEND_H

#include "dat/Frontend/Config.h"
#include "dat/Frontend/Weights.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace dat {

/// The program of a model description, in the dat dialect on tensors: one
/// module holding `@forward` and, for the models that decode token by token
/// (the language models, unless their relations are softmax-normalized over
/// future keys), the one-token decode `@step` with its caches; their layers
/// are private functions. Every argument and result of the two entry
/// functions carries a `#dat.program_value` (input, weight, cache or
/// output; the reference name; an integer input's accepted range). Weights
/// stay outside the module, as arguments, and are read from `weights` only
/// where the frontend derives something at compile time. Errors name the
/// config file and the offending key.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildProgram(mlir::MLIRContext &ctx, const ModelConfig &config,
             WeightSource &weights);

} // namespace dat

#endif // DAT_FRONTEND_FRONTEND_H
