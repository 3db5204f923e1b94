//===- DecomposeToLinalg.cpp - the dat-decompose-to-linalg pass -----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dat {

void populateDecomposeToLinalgPatterns(RewritePatternSet &patterns) {
  populateAttentionToLinalgPatterns(patterns);
  populateRopeToLinalgPatterns(patterns);
  populateOrthogonalMapToLinalgPatterns(patterns);
  populateHyperAttentionToLinalgPatterns(patterns);
  populateRelationalAttentionToLinalgPatterns(patterns);
}

#define GEN_PASS_DEF_DATDECOMPOSETOLINALG
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {
struct DecomposeToLinalgPass final
    : impl::DatDecomposeToLinalgBase<DecomposeToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeToLinalgPatterns(patterns);
    // Every dat op must go: one that stays (e.g. dynamic head counts) is an
    // error here, not a surprise in a later pass.
    ConversionTarget target(getContext());
    target.addIllegalDialect<DatDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
