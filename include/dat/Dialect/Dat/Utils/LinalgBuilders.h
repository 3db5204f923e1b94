//===- LinalgBuilders.h - shared linalg builders ----------------*- C++ -*-===//
//-*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// One library of IR builders for the math that both the frontend (model
// layers) and the dat lowerings (reference and flash forms) emit:
// projections and contractions, transposes, reductions along an axis,
// softmax, activations, conversions. A numerics change is made here, once.
//
// Contractions, reductions and elementwise maps are built as
// `linalg.generic`s, fills and transposes as named ops: the passes after
// them (bf16 storage narrowing, the vector layer's operand packing and
// register tiles, the library-GEMM matcher) rewrite generics' bodies and
// indexing maps, which a named contraction would not let them do
// (docs/architecture.md, "IR builders").
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_UTILS_LINALGBUILDERS_H
#define DAT_DIALECT_DAT_UTILS_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace mlir::dat {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Converts a scalar between float types (a no-op when they are equal).
inline Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  auto target = cast<FloatType>(to);
  if (from == target)
    return v;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, target, v);
  return arith::TruncFOp::create(b, loc, target, v);
}

/// The type reductions and rotations are computed in: f32 for narrower
/// floats, the element type otherwise.
inline FloatType accumulationType(Type elementType) {
  auto ft = cast<FloatType>(elementType);
  return ft.getWidth() < 32 ? Float32Type::get(ft.getContext()) : ft;
}

/// An empty tensor of `shape` (sizes may be dynamic) filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
                   Type elementType, TypedAttr value);

/// `value` (static shape) transposed by `perm` (dimension i of the result
/// is dimension perm[i] of `value`) into a new tensor.
Value buildTranspose(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> perm);

/// The scalar body of an elementwise generic: its inputs' elements in, the
/// result's element out.
using ScalarBody = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// An empty tensor of `type` whose dynamic dimensions are `like`'s (of the
/// same rank, or at least as many leading dimensions).
Value emptyTensorLike(OpBuilder &b, Location loc, RankedTensorType type,
                      Value like);

/// An empty tensor of `resultType` whose dynamic dimensions are sized from
/// an input that reads each directly through `inputMaps` (over the result's
/// dims) and is dynamic there too.
Value buildEmptyFor(OpBuilder &b, Location loc, RankedTensorType resultType,
                    ValueRange inputs, ArrayRef<AffineMap> inputMaps);

/// body(inputs...) elementwise into a new tensor of `resultType`, each
/// input read through its map in `inputMaps` (over the result's dims). Its
/// dynamic dimensions are sized from an input that reads each directly.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                       ScalarBody body);

/// acc += lhs · rhs as one linalg.generic with `maps` (lhs, rhs, acc) and
/// `iterators`; operands are widened to acc's element type.
Value buildMulAcc(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc,
                  ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators);

/// How a projection's weight is laid out.
enum class WeightLayout {
  OutIn, ///< [out, in]: torch's nn.Linear, y = x·Wᵀ
  InOut, ///< [in, out]: a Flax kernel, y = x·W
};

/// y[..., o] = Σ_i x[..., i] · W(o, i) (+ bias[o]) in f32: the bias
/// broadcast into the result first (or zeros), then the contraction
/// accumulated onto it — the form dat-fuse-epilogues and the library-GEMM
/// matcher recognise.
Value buildLinear(OpBuilder &b, Location loc, Value x, Value weight, Value bias,
                  WeightLayout layout = WeightLayout::OutIn);

/// Writes `x` (the accumulation type) into `init`, converting elements.
Value convertInto(OpBuilder &b, Location loc, Value x, Value init);

using ScalarCombine =
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)>;

/// `x` reduced along `axis` with combine(element, accumulator), starting
/// from `init`.
Value reduceAlong(OpBuilder &b, Location loc, Value x, unsigned axis,
                  TypedAttr init, ScalarCombine combine);
/// The maximum along `axis` (from -inf; NaN propagates).
Value maxAlong(OpBuilder &b, Location loc, Value x, unsigned axis);
/// The sum along `axis` (from 0).
Value sumAlong(OpBuilder &b, Location loc, Value x, unsigned axis);

/// fn(x[..], row[..]) elementwise, `row` being `x` without `axis` (or of
/// x's shape when `axis` is x's rank); written into `x` itself when
/// `inPlace`, so that a loop-carried tensor keeps its buffer.
Value rowwise(OpBuilder &b, Location loc, Value x, Value rowValue,
              unsigned axis, ScalarCombine fn, bool inPlace = false);

/// softmax of `x` along `axis`: exp(x - max) / Σ exp(x - max), in x's
/// element type. (Attention's softmax, which must give 0 for a fully masked
/// row, is AttentionBuilders' buildSoftmaxParts.)
Value softmaxAlong(OpBuilder &b, Location loc, Value x, unsigned axis);

/// The scalar activation `name` of `x` (relu, sigmoid, tanh, silu, gelu —
/// DAT's tanh form —, gelu_erf — the exact form); any other name is the
/// identity. Callers check names where they read them.
Value buildActivation(OpBuilder &b, Location loc, StringRef name, Value x);

} // namespace mlir::dat

#endif // DAT_DIALECT_DAT_UTILS_LINALGBUILDERS_H
