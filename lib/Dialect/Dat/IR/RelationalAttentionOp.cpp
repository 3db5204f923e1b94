//===- RelationalAttentionOp.cpp - relational attention verifiers ---------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

/// The relation activations the reference accepts (spec §1.2).
static bool isRelationActivation(StringRef name) {
  return llvm::is_contained(
      {"identity", "relu", "sigmoid", "tanh", "silu", "gelu", "softmax"}, name);
}

/// Checks `actual` against `expected` when both are static.
static LogicalResult expectDim(Operation *op, StringRef operand, int64_t dim,
                               StringRef dimName, int64_t actual,
                               StringRef refOperand, int64_t expected) {
  if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) ||
      actual == expected)
    return success();
  return op->emitOpError("expected ")
         << operand << " dim " << dim << " (" << dimName << ") to be "
         << expected << " as in " << refOperand << ", got " << actual;
}

static LogicalResult verifyRelations(Operation *op, RankedTensorType qr,
                                     RankedTensorType kr, StringRef activation,
                                     const APFloat &scale) {
  if (qr.getRank() != 4 || kr.getRank() != 4)
    return op->emitOpError(
        "expected rel_query and rel_key to have rank 4 [B,R,L,dr]");
  if (qr.getElementType() != kr.getElementType() ||
      !isa<FloatType>(qr.getElementType()))
    return op->emitOpError(
        "expected rel_query and rel_key of one float element type");
  for (unsigned d : {0u, 1u, 3u})
    if (failed(expectDim(op, "rel_key", d,
                         d == 0   ? "batch"
                         : d == 1 ? "relations"
                                  : "rel dim",
                         kr.getDimSize(d), "rel_query", qr.getDimSize(d))))
      return failure();
  if (!isRelationActivation(activation))
    return op->emitOpError("unknown relation activation '")
           << activation
           << "' (expected identity, relu, sigmoid, tanh, silu, gelu or "
              "softmax)";
  if (!scale.isFinite())
    return op->emitOpError("expected a finite rel_scale");
  return success();
}

LogicalResult RelationsOp::verify() {
  auto qr = cast<RankedTensorType>(getRelQuery().getType());
  auto kr = cast<RankedTensorType>(getRelKey().getType());
  auto init = cast<RankedTensorType>(getInit().getType());
  if (failed(verifyRelations(*this, qr, kr, getActivation(), getScale())))
    return failure();
  if (init.getRank() != 4 || init.getElementType() != qr.getElementType())
    return emitOpError("expected init of rank 4 [B,Lq,Lk,R] with the "
                       "relations' element type");
  if (getResult().getType() != init)
    return emitOpError("expected result type to match init type");
  if (failed(expectDim(*this, "init", 0, "batch", init.getDimSize(0),
                       "rel_query", qr.getDimSize(0))) ||
      failed(expectDim(*this, "init", 1, "query length", init.getDimSize(1),
                       "rel_query", qr.getDimSize(2))) ||
      failed(expectDim(*this, "init", 2, "key length", init.getDimSize(2),
                       "rel_key", kr.getDimSize(2))) ||
      failed(expectDim(*this, "init", 3, "relations", init.getDimSize(3),
                       "rel_query", qr.getDimSize(1))))
    return failure();
  return success();
}

std::optional<int64_t> RelationalAttentionOp::getGroupSize() {
  int64_t heads = getQueryType().getDimSize(1);
  int64_t kvHeads = getKeyType().getDimSize(1);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
      kvHeads == 0 || heads % kvHeads != 0)
    return std::nullopt;
  return heads / kvHeads;
}

LogicalResult RelationalAttentionOp::verify() {
  auto q = getQueryType(), k = getKeyType();
  auto qr = cast<RankedTensorType>(getRelQuery().getType());
  auto kr = cast<RankedTensorType>(getRelKey().getType());
  auto s = cast<RankedTensorType>(getSymbols().getType());
  auto wr = cast<RankedTensorType>(getWr().getType());
  auto o = cast<RankedTensorType>(getInit().getType());
  if (getSymbolsPerPair() && getRelativeSymbols())
    return emitOpError("symbols_per_pair and relative_symbols exclude each "
                       "other");
  int64_t symbolsRank = getRelativeSymbols() ? 3 : 4;
  if (q.getRank() != 4 || k.getRank() != 4 || s.getRank() != symbolsRank ||
      o.getRank() != 4 || wr.getRank() != 3)
    return emitOpError("expected rank-4 query, key and init, rank-")
           << symbolsRank << " symbols and a rank-3 wr [H,hd,R]";
  Type et = q.getElementType();
  if (!isa<FloatType>(et))
    return emitOpError("expected a float query, got ") << et;
  auto proj = getSymbolProj()
                  ? cast<RankedTensorType>(getSymbolProj().getType())
                  : RankedTensorType();
  SmallVector<RankedTensorType> operands = {k, qr, kr, s, wr, o};
  if (proj)
    operands.push_back(proj);
  for (RankedTensorType t : operands)
    if (t.getElementType() != et)
      return emitOpError("expected every operand to have element type ") << et;
  if (getResult().getType() != o)
    return emitOpError("expected result type to match init type");
  if (failed(verifyRelations(*this, qr, kr, getActivation(), getRelScale())))
    return failure();
  if (!getScale().isFinite())
    return emitOpError("expected a finite scale");

  int64_t B = q.getDimSize(0), H = q.getDimSize(1), Lq = q.getDimSize(2),
          Hkv = k.getDimSize(1), Lk = k.getDimSize(2), R = qr.getDimSize(1),
          hd = o.getDimSize(3);
  if (Hkv == 0)
    return emitOpError("expected key dim 1 (kv heads) to be at least 1");
  if (!ShapedType::isDynamic(H) && !ShapedType::isDynamic(Hkv) && H % Hkv)
    return emitOpError("expected query dim 1 (heads) ")
           << H << " to be a multiple of key dim 1 (kv heads) " << Hkv;
  Operation *op = *this;
  auto checks = {
      expectDim(op, "key", 0, "batch", k.getDimSize(0), "query", B),
      expectDim(op, "key", 3, "key dim", k.getDimSize(3), "query",
                q.getDimSize(3)),
      expectDim(op, "rel_query", 0, "batch", qr.getDimSize(0), "query", B),
      expectDim(op, "rel_query", 2, "query length", qr.getDimSize(2), "query",
                Lq),
      expectDim(op, "rel_key", 2, "key length", kr.getDimSize(2), "key", Lk),
      expectDim(op, "init", 0, "batch", o.getDimSize(0), "query", B),
      expectDim(op, "init", 1, "heads", o.getDimSize(1), "query", H),
      expectDim(op, "init", 2, "query length", o.getDimSize(2), "query", Lq),
      expectDim(op, "wr", 0, "heads", wr.getDimSize(0), "query", H),
      expectDim(op, "wr", 1, "head dim", wr.getDimSize(1), "init", hd),
      expectDim(op, "wr", 2, "relations", wr.getDimSize(2), "rel_query", R)};
  for (LogicalResult r : checks)
    if (failed(r))
      return failure();
  // The symbols' width: the head dim, or symbol_proj's input width.
  int64_t symbolWidth = hd;
  if (proj) {
    if (proj.getRank() != 3)
      return emitOpError("expected a rank-3 symbol_proj [H,hd,ds], got rank ")
             << proj.getRank();
    if (failed(expectDim(op, "symbol_proj", 0, "heads", proj.getDimSize(0),
                         "query", H)) ||
        failed(expectDim(op, "symbol_proj", 1, "head dim", proj.getDimSize(1),
                         "init", hd)))
      return failure();
    symbolWidth = proj.getDimSize(2);
  }
  const char *widthOf = proj ? "symbol_proj" : "init";
  if (getRelativeSymbols()) {
    int64_t rows = s.getDimSize(0);
    if (!ShapedType::isDynamic(rows) && rows % 2 == 0)
      return emitOpError("expected relative symbols [2M+1,Hkv,hd]: an odd "
                         "number of rows, got ")
             << rows;
    if (failed(expectDim(op, "symbols", 1, "kv heads", s.getDimSize(1), "key",
                         Hkv)) ||
        failed(expectDim(op, "symbols", 2, "head dim", s.getDimSize(2), widthOf,
                         symbolWidth)))
      return failure();
  } else if (getSymbolsPerPair()) {
    if (failed(expectDim(op, "symbols", 0, "query length", s.getDimSize(0),
                         "query", Lq)) ||
        failed(expectDim(op, "symbols", 1, "key length", s.getDimSize(1), "key",
                         Lk)) ||
        // One symbol per pair for every head (size 1), or per kv head.
        (s.getDimSize(2) != 1 &&
         failed(expectDim(op, "symbols", 2, "kv heads", s.getDimSize(2), "key",
                          Hkv))) ||
        failed(expectDim(op, "symbols", 3, "head dim", s.getDimSize(3), widthOf,
                         symbolWidth)))
      return failure();
  } else if (failed(expectDim(op, "symbols", 0, "batch", s.getDimSize(0),
                              "query", B)) ||
             failed(expectDim(op, "symbols", 1, "kv heads", s.getDimSize(1),
                              "key", Hkv)) ||
             failed(expectDim(op, "symbols", 2, "key length", s.getDimSize(2),
                              "key", Lk)) ||
             failed(expectDim(op, "symbols", 3, "head dim", s.getDimSize(3),
                              widthOf, symbolWidth))) {
    return failure();
  }
  if (Value mask = getMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getRank() != 2 || !m.getElementType().isInteger(1))
      return emitOpError("expected mask of type tensor<NqxNkxi1>");
    if (failed(expectDim(op, "mask", 0, "query length", m.getDimSize(0),
                         "query", Lq)) ||
        failed(
            expectDim(op, "mask", 1, "key length", m.getDimSize(1), "key", Lk)))
      return failure();
  }
  return success();
}

} // namespace mlir::dat
