//===- AttentionOpTest.cpp - unit tests of dat.attention ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dat;

namespace {

class AttentionOpTest : public ::testing::Test {
protected:
  AttentionOpTest() : builder(&context) {
    context.loadDialect<DatDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// Builds an attention op on function arguments of the given shapes and
  /// returns whether the module verifies; the first diagnostic lands in
  /// `lastError`.
  bool verifies(ArrayRef<int64_t> q, ArrayRef<int64_t> k, ArrayRef<int64_t> v,
                ArrayRef<int64_t> o, float scale = 0.5f) {
    Type f32 = builder.getF32Type();
    SmallVector<Type> args = {
        RankedTensorType::get(q, f32), RankedTensorType::get(k, f32),
        RankedTensorType::get(v, f32), RankedTensorType::get(o, f32)};
    auto fn = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                   builder.getFunctionType(args, {}));
    Block *body = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(body);
    AttentionOp::create(b, b.getUnknownLoc(), body->getArgument(0),
                        body->getArgument(1), body->getArgument(2),
                        body->getArgument(3), scale, /*causal=*/true);
    func::ReturnOp::create(b, b.getUnknownLoc());
    lastError.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (lastError.empty())
        lastError = diag.str();
      return success();
    });
    bool ok = succeeded(verify(*module));
    fn.erase();
    return ok;
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  std::string lastError;
};

TEST_F(AttentionOpTest, BuilderProducesValidGroupedQueryOp) {
  EXPECT_TRUE(
      verifies({2, 8, 16, 32}, {2, 2, 20, 32}, {2, 2, 20, 24}, {2, 8, 16, 24}))
      << lastError;
}

TEST_F(AttentionOpTest, GroupSizeIsHeadsOverKvHeads) {
  Type f32 = builder.getF32Type();
  auto t = [&](ArrayRef<int64_t> s) { return RankedTensorType::get(s, f32); };
  auto fn = func::FuncOp::create(
      builder, builder.getUnknownLoc(), "g",
      builder.getFunctionType(
          {t({1, 6, 4, 8}), t({1, 2, 4, 8}), t({1, 2, 4, 8}), t({1, 6, 4, 8})},
          {}));
  Block *body = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(body);
  auto op = AttentionOp::create(b, b.getUnknownLoc(), body->getArgument(0),
                                body->getArgument(1), body->getArgument(2),
                                body->getArgument(3), 0.25f, false);
  ASSERT_TRUE(op.getGroupSize().has_value());
  EXPECT_EQ(*op.getGroupSize(), 3);
  EXPECT_FALSE(op.getCausal());
  EXPECT_FLOAT_EQ(op.getScale().convertToFloat(), 0.25f);
}

TEST_F(AttentionOpTest, RejectsHeadsNotAMultipleOfKvHeads) {
  EXPECT_FALSE(
      verifies({1, 6, 4, 8}, {1, 4, 4, 8}, {1, 4, 4, 8}, {1, 6, 4, 8}));
  EXPECT_NE(lastError.find("query dim 1 (heads) 6 to be a multiple of key "
                           "dim 1 (kv heads) 4"),
            std::string::npos)
      << lastError;
}

TEST_F(AttentionOpTest, RejectsMismatchedHeadDim) {
  EXPECT_FALSE(
      verifies({1, 2, 4, 8}, {1, 2, 4, 16}, {1, 2, 4, 8}, {1, 2, 4, 8}));
  EXPECT_NE(lastError.find("key dim 3 (head dim) to be 8 as in query, got 16"),
            std::string::npos)
      << lastError;
}

TEST_F(AttentionOpTest, RejectsNonFiniteScale) {
  EXPECT_FALSE(verifies({1, 2, 4, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}, {1, 2, 4, 8},
                        INFINITY));
  EXPECT_NE(lastError.find("expected a finite scale"), std::string::npos)
      << lastError;
}

} // namespace
