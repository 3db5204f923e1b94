//===- DatToLLVMIRTranslation.h - dat attributes in LLVM IR -----*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_TARGET_LLVMIR_DATTOLLVMIRTRANSLATION_H
#define DAT_TARGET_LLVMIR_DATTOLLVMIRTRANSLATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::dat {

/// Registers the dat dialect's translation to LLVM IR: the
/// `#dat.program_value` on entry functions' arguments has no LLVM IR form
/// (dat-program-manifest has written what it says into the manifest) and is
/// dropped, as are the dialect's discardable attributes on ops.
void registerDatDialectTranslation(DialectRegistry &registry);

} // namespace mlir::dat

#endif // DAT_TARGET_LLVMIR_DATTOLLVMIRTRANSLATION_H
