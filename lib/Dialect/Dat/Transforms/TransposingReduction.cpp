//===- TransposingReduction.cpp - row reductions as one shuffle tree ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The relational tile's Σ_j p[h,i,j] · r[l,i,j] reduces, per query row and
// head, a [relations × keys] product along the keys. Upstream's lowering of
// `vector.multi_reduction` (InnerReduction) reduces each relation's row on
// its own: its chunks added to one register, then a horizontal tree of four
// shuffle-and-add steps, for every row. With R rows, the horizontal trees
// can share their steps instead: two registers of rows a and b become one
// holding both, each half as long (a shuffle of the lower halves plus one of
// the upper halves), until one register holds all R rows, 16 / R lanes
// each; a few in-group steps and one gather finish. For 4 relations on
// 16-lane registers: 14 vector operations instead of 4 × 8. A count of rows
// that is not a power of two (12 relations) has its odd levels padded with
// a copy of their last register: 37 operations for 12 rows instead of 96.
// Where the reduced vector is a product, each chunk's product is added with
// `contract`, so that LLVM fuses them into FMAs.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dat {
namespace {

struct TransposingRowReduction final
    : OpRewritePattern<vector::MultiDimReductionOp> {
  TransposingRowReduction(MLIRContext *ctx, int64_t lanes,
                          arith::FastMathFlags maxFlags, PatternBenefit benefit)
      : OpRewritePattern(ctx, benefit), lanes(lanes), maxFlags(maxFlags) {}

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    vector::CombiningKind kind = op.getKind();
    if (op.isMasked() || type.getRank() != 2 || type.isScalable() ||
        !type.getElementType().isF32() ||
        op.getReductionDims() != ArrayRef<int64_t>{1} ||
        !llvm::is_contained({vector::CombiningKind::ADD,
                             vector::CombiningKind::MAXNUMF,
                             vector::CombiningKind::MAXIMUMF},
                            kind))
      return rewriter.notifyMatchFailure(op, "not an f32 row reduction");
    int64_t rows = type.getDimSize(0), length = type.getDimSize(1);
    if (rows < 2 || static_cast<int64_t>(llvm::PowerOf2Ceil(rows)) > lanes ||
        length % lanes != 0)
      return rewriter.notifyMatchFailure(op, "rows do not fit a register");

    Location loc = op.getLoc();
    auto contract = arith::FastMathFlagsAttr::get(
        rewriter.getContext(), arith::FastMathFlags::contract);
    auto flags = arith::FastMathFlagsAttr::get(
        rewriter.getContext(), kind == vector::CombiningKind::MAXIMUMF
                                   ? maxFlags
                                   : arith::FastMathFlags::none);
    auto combine = [&](Value a, Value b) {
      return vector::makeArithReduction(rewriter, loc, kind, a, b, flags);
    };
    // A sum of products (seen through the shape_cast that dropped the
    // reduction's unit dimensions): each chunk's product added where it is
    // made.
    Value lhs, rhs;
    if (kind == vector::CombiningKind::ADD) {
      Value source = op.getSource();
      if (auto cast = source.getDefiningOp<vector::ShapeCastOp>())
        source = cast.getSource();
      if (auto product = source.getDefiningOp<arith::MulFOp>()) {
        auto asRows = [&](Value v) -> Value {
          if (v.getType() == type)
            return v;
          return vector::ShapeCastOp::create(rewriter, loc, type, v);
        };
        lhs = asRows(product.getLhs());
        rhs = asRows(product.getRhs());
      }
    }
    // Register c of a row (a vector<length> extracted once per row).
    auto chunk = [&](Value row, int64_t c) -> Value {
      if (length == lanes)
        return row;
      return vector::ExtractStridedSliceOp::create(
          rewriter, loc, row, ArrayRef<int64_t>{c * lanes},
          ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1});
    };
    auto rowOf = [&](Value v, int64_t r) -> Value {
      return v ? Value(vector::ExtractOp::create(rewriter, loc, v, r))
               : Value();
    };
    // Each row folded into one register.
    SmallVector<Value> level;
    for (int64_t r = 0; r < rows; ++r) {
      Value a = rowOf(lhs, r), b = rowOf(rhs, r);
      Value source = lhs ? Value() : rowOf(op.getSource(), r);
      Value sum;
      for (int64_t c = 0; c < length / lanes; ++c) {
        if (lhs) {
          Value p = arith::MulFOp::create(rewriter, loc, chunk(a, c),
                                          chunk(b, c), contract);
          sum = sum ? Value(arith::AddFOp::create(rewriter, loc, sum, p,
                                                  contract))
                    : p;
          continue;
        }
        Value v = chunk(source, c);
        sum = sum ? combine(sum, v) : v;
      }
      level.push_back(sum);
    }
    // Pairs of registers of `groups` groups into one of twice as many
    // groups, half as long: [x's groups, y's groups] by lower + upper halves.
    // An odd count (12 relations: 12, 6, 3 registers) pairs its last
    // register with itself: its groups land after every real row's, and
    // the final gather skips them.
    int64_t groups = 1;
    while (level.size() > 1) {
      if (level.size() % 2)
        level.push_back(level.back());
      int64_t size = lanes / groups, half = size / 2;
      SmallVector<int64_t> lower, upper;
      for (int64_t from : {int64_t(0), lanes})
        for (int64_t g = 0; g < groups; ++g)
          for (int64_t i = 0; i < half; ++i) {
            lower.push_back(from + g * size + i);
            upper.push_back(from + g * size + half + i);
          }
      SmallVector<Value> next;
      for (size_t i = 0; i < level.size(); i += 2) {
        Value lo = vector::ShuffleOp::create(rewriter, loc, level[i],
                                             level[i + 1], lower);
        Value hi = vector::ShuffleOp::create(rewriter, loc, level[i],
                                             level[i + 1], upper);
        next.push_back(combine(lo, hi));
      }
      level = std::move(next);
      groups *= 2;
    }
    // Inside each group: halves folded until lane 0 holds the group's total.
    Value all = level.front();
    for (int64_t size = lanes / groups; size > 1; size /= 2) {
      SmallVector<int64_t> swap;
      for (int64_t i = 0; i < lanes; ++i)
        swap.push_back((i % size) < size / 2 ? i + size / 2 : i - size / 2);
      all = combine(all,
                    vector::ShuffleOp::create(rewriter, loc, all, all, swap));
    }
    SmallVector<int64_t> firsts;
    for (int64_t g = 0; g < rows; ++g)
      firsts.push_back(g * (lanes / groups));
    Value totals = vector::ShuffleOp::create(rewriter, loc, all, all, firsts);
    rewriter.replaceOp(op, combine(totals, op.getAcc()));
    return success();
  }

  int64_t lanes;
  arith::FastMathFlags maxFlags;
};

} // namespace

void populateTransposingReductionPatterns(RewritePatternSet &patterns,
                                          int64_t lanes,
                                          arith::FastMathFlags maxFlags,
                                          PatternBenefit benefit) {
  patterns.add<TransposingRowReduction>(patterns.getContext(), lanes, maxFlags,
                                        benefit);
}

} // namespace mlir::dat
