//===- ModelBuilder.cpp - building dat IR from a model description --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/ModelBuilder.h"

#include "dat/Dialect/Dat/IR/DatAttrs.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace llvm;
using namespace mlir;

namespace dat {

static Type elementType(MLIRContext *ctx, StringRef dtype) {
  return dtype == "int64" ? Type(IntegerType::get(ctx, 64))
                          : Type(Float32Type::get(ctx));
}

ModelBuilder::ModelBuilder(MLIRContext &ctx, const ModelConfig &config,
                           WeightSource &weights)
    : b(&ctx), loc(FileLineColLoc::get(&ctx, config.path, 1, 1)),
      config(config), weights(weights), kwargs(&config.kwargs) {
  ctx.loadDialect<mlir::dat::DatDialect, func::FuncDialect,
                  linalg::LinalgDialect, tensor::TensorDialect,
                  bufferization::BufferizationDialect>();
  module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(b, loc, "forward", b.getFunctionType({}, {}));
  b.setInsertionPointToEnd(func.addEntryBlock());
  for (const TensorSpec &in : config.inputs)
    addArgument({SignatureEntry::Input, in.name, in.shape, in.dtype,
                 std::nullopt, in.dims});
}

Value ModelBuilder::addArgument(SignatureEntry entry) {
  SmallVector<int64_t> shape(entry.shape.begin(), entry.shape.end());
  for (auto [d, name] : llvm::enumerate(entry.dims))
    if (!name.empty())
      shape[d] = ShapedType::kDynamic;
  auto type =
      RankedTensorType::get(shape, elementType(b.getContext(), entry.dtype));
  entries.push_back(std::move(entry));
  return func.getBody().front().addArgument(type, loc);
}

void ModelBuilder::startDecoding(int64_t maxLength) {
  decodeMax = maxLength;
  Value p = addArgument({SignatureEntry::Input, "position", {1}, "int64"});
  inputRange("position", 0, maxLength - 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value v = tensor::ExtractOp::create(b, loc, p, ValueRange{zero});
  position = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value ModelBuilder::cached(StringRef name, Value fresh, unsigned axis) {
  if (!decoding() || !fresh || failed())
    return fresh;
  auto t = cast<RankedTensorType>(fresh.getType());
  std::vector<int64_t> shape(t.getShape().begin(), t.getShape().end());
  shape[axis] = decodeMax;
  Value cache = addArgument(
      {SignatureEntry::Cache, ("cache." + name).str(), shape, "float32"});
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)), sizes,
      strides(shape.size(), b.getIndexAttr(1));
  for (int64_t d : t.getShape())
    sizes.push_back(b.getIndexAttr(d));
  offsets[axis] = position;
  Value updated = tensor::InsertSliceOp::create(b, loc, fresh, cache, offsets,
                                                sizes, strides);
  cacheOutputs.push_back({("cache." + name).str(), updated});
  return updated;
}

void ModelBuilder::error(const Twine &message) {
  if (firstError.empty())
    firstError = message.str();
}

bool ModelBuilder::hasInput(StringRef name) const {
  return config.findInput(name) != nullptr;
}

Value ModelBuilder::input(StringRef name) {
  for (auto [i, e] : llvm::enumerate(entries))
    if (e.kind == SignatureEntry::Input && e.name == name)
      return func.getBody().front().getArgument(i);
  error(config.path + ": inputs." + name + ": " + config.module +
        " needs this input, but the config does not declare it");
  return {};
}

Value ModelBuilder::input(StringRef name, int64_t rank, StringRef dtype) {
  Value v = input(name);
  if (!v)
    return {};
  if (cast<RankedTensorType>(v.getType()).getElementType() !=
      elementType(b.getContext(), dtype.str())) {
    error(config.path + ": inputs." + name + ".dtype: " + config.module +
          " expects " + dtype);
    return {};
  }
  int64_t actual = cast<RankedTensorType>(v.getType()).getRank();
  if (actual != rank) {
    error(config.path + ": inputs." + name + ".shape: " + config.module +
          " expects rank " + Twine(rank) + ", got rank " + Twine(actual));
    return {};
  }
  return v;
}

Value ModelBuilder::streamInput(StringRef name, int64_t width,
                                StringRef widthKey) {
  Value v = input(name, 3);
  if (!v)
    return {};
  int64_t actual = cast<RankedTensorType>(v.getType()).getDimSize(2);
  if (actual != width) {
    error(config.path + ": inputs." + name + ".shape: the last dimension is " +
          Twine(actual) + ", but kwargs." + widthKey + " is " + Twine(width));
    return {};
  }
  return v;
}

/// `v` (int64) as an i1 tensor: nonzero = true.
static Value nonzero(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(t.getRank(), b.getContext());
  return linalg::GenericOp::create(
             b, loc, t.clone(b.getI1Type()), ValueRange{v},
             ValueRange{
                 mlir::dat::emptyTensorLike(b, loc, t.clone(b.getI1Type()), v)},
             ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(t.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value zero = arith::ConstantIntOp::create(nb, nl, 0, 64);
               linalg::YieldOp::create(
                   nb, nl,
                   Value(arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne,
                                               args[0], zero)));
             })
      .getResult(0);
}

Value ModelBuilder::boolInput(StringRef name, ArrayRef<int64_t> shape) {
  Value v = input(name, shape.size(), "int64");
  if (!v)
    return {};
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.getElementType().isInteger(64) || t.getShape() != shape) {
    std::string dims;
    for (int64_t d : shape)
      dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    error(config.path + ": inputs." + name + ": expected int64 [" + dims +
          "] (nonzero = may attend)");
    return {};
  }
  return nonzero(b, loc, v);
}

Value ModelBuilder::boolInput(StringRef name, Value like,
                              ArrayRef<int64_t> likeDims) {
  Value v = input(name, likeDims.size(), "int64");
  if (!v)
    return {};
  auto t = cast<RankedTensorType>(v.getType());
  bool ok = t.getElementType().isInteger(64);
  for (auto [i, d] : llvm::enumerate(likeDims))
    ok = ok && (d == kUnitDim ? t.getDimSize(i) == 1 : sameDim(v, i, like, d));
  if (!ok) {
    std::string dims;
    for (int64_t d : likeDims)
      dims += (dims.empty() ? "" : ", ") +
              (d == kUnitDim ? std::string("1") : sizeText(like, d));
    error(config.path + ": inputs." + name + ": expected int64 [" + dims +
          "] (nonzero = may attend)");
    return {};
  }
  return nonzero(b, loc, v);
}

Value ModelBuilder::weight(StringRef name, ArrayRef<int64_t> shape) {
  auto it = weightArgs.find(name.str());
  if (it != weightArgs.end())
    return it->second;
  if (Error e = weights.require(name, shape))
    error(toString(std::move(e)));
  Value arg = addArgument({SignatureEntry::Weight, name.str(),
                           std::vector<int64_t>(shape.begin(), shape.end()),
                           "float32"});
  weightArgs[name.str()] = arg;
  return arg;
}

Value ModelBuilder::derivedWeight(
    StringRef name, ArrayRef<int64_t> shape,
    std::vector<std::pair<std::string, std::vector<int64_t>>> deps,
    WeightSource::Derivation compute) {
  for (const auto &[dep, depShape] : deps)
    if (Error e = weights.require(dep, depShape))
      error(toString(std::move(e)));
  weights.addDerived(name, shape, deps, std::move(compute));
  Value arg = addArgument({SignatureEntry::Weight, name.str(),
                           std::vector<int64_t>(shape.begin(), shape.end()),
                           "float32"});
  weightArgs[name.str()] = arg;
  return arg;
}

std::vector<float> ModelBuilder::weightValues(StringRef name,
                                              ArrayRef<int64_t> shape) {
  if (Error e = weights.require(name, shape)) {
    error(toString(std::move(e)));
    return {};
  }
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<float> values(n);
  weights.fill(name, shape, values.data());
  return values;
}

void ModelBuilder::inputRange(StringRef name, int64_t lo, int64_t hi) {
  for (SignatureEntry &e : entries)
    if (e.kind == SignatureEntry::Input && e.name == name)
      e.range = {lo, hi};
}

void ModelBuilder::output(StringRef name, Value value) {
  if (!value || !config.wantsOutput(name))
    return;
  outputs[name.str()] = value;
}

Expected<OwningOpRef<ModuleOp>> ModelBuilder::finish() {
  reportUnread(config.kwargs, readKwargs, config.module);
  for (const TensorSpec &out : config.outputs) {
    auto it = outputs.find(out.name);
    if (it == outputs.end()) {
      error(config.path + ": outputs." + out.name + ": " + config.module +
            " does not produce this output");
      continue;
    }
  }
  if (firstError.empty())
    for (const std::string &key : weights.unusedKeys()) {
      error(weights.describe() + ": unexpected weight '" + key +
            "': not a parameter of " + config.module + " with these kwargs");
      break;
    }
  if (!firstError.empty())
    return createStringError("%s", firstError.c_str());

  SmallVector<Value> results;
  for (const TensorSpec &out : config.outputs)
    results.push_back(outputs[out.name]);
  for (auto &[name, value] : cacheOutputs)
    results.push_back(value);
  func::ReturnOp::create(b, loc, results);
  Block &body = func.getBody().front();
  func.setType(b.getFunctionType(body.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  if (mlir::failed(verify(*module)))
    return createStringError("%s: internal error: the IR built for %s does "
                             "not verify",
                             config.path.c_str(), config.module.c_str());
  // The results' entries (a dynamic dimension named after the input's it
  // is), checked against the config's shapes where it gives them.
  for (const TensorSpec &out : config.outputs) {
    SignatureEntry e = resultEntry(out.name, outputs[out.name]);
    e.dtype = out.dtype;
    // (No names: every dimension static.)
    auto named = [](std::vector<std::string> dims, size_t rank) {
      dims.resize(rank);
      return dims;
    };
    if (!out.shape.empty() &&
        (e.shape != out.shape ||
         named(e.dims, e.shape.size()) != named(out.dims, e.shape.size())))
      error(config.path + ": outputs." + out.name +
            ": the config's shape does not match what " + config.module +
            " computes");
    entries.push_back(std::move(e));
  }
  for (auto &[name, value] : cacheOutputs)
    entries.push_back(resultEntry(name, value));
  if (!firstError.empty())
    return createStringError("%s", firstError.c_str());
  // Every argument and result says what it is (#dat.program_value); inputs
  // and weights are read-only (the program maps them from files). (Set all
  // at once: setArgAttr per argument rebuilds and uniques the whole
  // attribute list every time, quadratic in a deep model's weights.)
  auto describe = [&](const SignatureEntry &e) {
    using mlir::dat::ProgramValueKind;
    ProgramValueKind kind =
        e.kind == SignatureEntry::Input    ? ProgramValueKind::Input
        : e.kind == SignatureEntry::Weight ? ProgramValueKind::Weight
        : e.kind == SignatureEntry::Cache  ? ProgramValueKind::Cache
                                           : ProgramValueKind::Output;
    std::optional<int64_t> lo, hi;
    if (e.range)
      std::tie(lo, hi) = *e.range;
    ArrayAttr dims;
    DenseI64ArrayAttr maxShape;
    if (!e.dims.empty()) {
      dims = b.getStrArrayAttr(
          SmallVector<StringRef>(e.dims.begin(), e.dims.end()));
      maxShape = b.getDenseI64ArrayAttr(e.shape);
    }
    return b.getNamedAttr(
        mlir::dat::DatDialect::kProgramValueAttrName,
        mlir::dat::ProgramValueAttr::get(b.getContext(), kind, e.name, lo, hi,
                                         /*reference_shape=*/nullptr, dims,
                                         maxShape, /*permutation=*/{}));
  };
  NamedAttribute readOnly =
      b.getNamedAttr(bufferization::BufferizationDialect::kWritableAttrName,
                     b.getBoolAttr(false));
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  for (const SignatureEntry &e : entries) {
    if (e.kind == SignatureEntry::Output)
      resultAttrs.push_back(b.getDictionaryAttr(describe(e)));
    else
      argAttrs.push_back(b.getDictionaryAttr({describe(e), readOnly}));
  }
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  return std::move(module);
}

SignatureEntry ModelBuilder::resultEntry(StringRef name, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SignatureEntry e{
      SignatureEntry::Output, name.str(),
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
      "float32"};
  if (type.hasStaticShape())
    return e;
  // A dynamic dimension of a result is one of the inputs': which one, the
  // IR proves (value bounds through the linalg, tensor and dat ops).
  e.dims.assign(type.getRank(), "");
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    e.dims[d] = dimName(value, d);
    if (e.dims[d].empty())
      error(config.path + ": outputs." + name + ": internal error: dimension " +
            Twine(d) + " is dynamic, but not one of the inputs' dynamic_dims");
    else
      e.shape[d] = config.dynamicDimMax(e.dims[d]);
  }
  return e;
}

/// The argument and dimension of `fn` that dimension `d` of `v` equals:
/// through the layers outlined into functions (calls, their callees'
/// results and arguments), and otherwise by value bounds (linalg, tensor
/// and dat ops) against `fn`'s arguments and the results of its calls. (A
/// layer being built is a function whose body still uses `fn`'s values.)
/// `depth` bounds the nesting.
static std::optional<std::pair<unsigned, int64_t>>
traceToArgument(Value v, int64_t d, func::FuncOp fn, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.isDynamicDim(d) || depth > 8)
    return std::nullopt;
  Block &entry = fn.getBody().front();
  if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &entry)
    return std::make_pair(arg.getArgNumber(), d);
  // A call's result: its callee's returned value, traced to the callee's
  // argument, is the call's operand.
  if (auto call = v.getDefiningOp<func::CallOp>()) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return std::nullopt;
    auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
    auto inner =
        traceToArgument(ret.getOperand(cast<OpResult>(v).getResultNumber()), d,
                        callee, depth + 1);
    if (!inner)
      return std::nullopt;
    return traceToArgument(call.getOperand(inner->first), inner->second, fn,
                           depth + 1);
  }
  // Otherwise a dimension the IR proves equal to an argument's or a call
  // result's.
  SmallVector<std::pair<Value, int64_t>> candidates;
  auto add = [&](Value c) {
    if (auto t = dyn_cast<RankedTensorType>(c.getType()))
      for (int64_t k = 0; k < t.getRank(); ++k)
        if (t.isDynamicDim(k))
          candidates.push_back({c, k});
  };
  for (BlockArgument arg : entry.getArguments())
    add(arg);
  fn.walk([&](func::CallOp call) {
    for (Value r : call.getResults())
      add(r);
  });
  for (auto [c, k] : candidates) {
    FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual({v, d}, {c, k});
    if (succeeded(equal) && *equal)
      return traceToArgument(c, k, fn, depth + 1);
  }
  return std::nullopt;
}

std::string ModelBuilder::dimName(Value v, int64_t d) {
  std::optional<std::pair<unsigned, int64_t>> arg =
      traceToArgument(v, d, func, 0);
  if (!arg || arg->first >= entries.size())
    return "";
  const SignatureEntry &entry = entries[arg->first];
  if (entry.kind != SignatureEntry::Input ||
      arg->second >= static_cast<int64_t>(entry.dims.size()))
    return "";
  return entry.dims[arg->second];
}

std::string ModelBuilder::sizeText(Value v, int64_t d) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.isDynamicDim(d) ? dimName(v, d) : std::to_string(t.getDimSize(d));
}

int64_t ModelBuilder::largestSize(Value v, int64_t d) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.isDynamicDim(d) ? config.dynamicDimMax(dimName(v, d))
                           : t.getDimSize(d);
}

bool ModelBuilder::sameDim(Value a, int64_t da, Value c, int64_t dc) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tc = cast<RankedTensorType>(c.getType());
  if (!ta.isDynamicDim(da) || !tc.isDynamicDim(dc))
    return ta.getDimSize(da) == tc.getDimSize(dc);
  std::string name = dimName(a, da);
  return !name.empty() && name == dimName(c, dc);
}

Value ModelBuilder::stack(StringRef name, int64_t count, Value x,
                          llvm::function_ref<Value(int64_t, Value)> layer) {
  for (int64_t l = 0; l < count && x && !failed(); ++l)
    x = outlined((name + Twine(l)).str(), [&] { return layer(l, x); });
  return failed() ? Value() : x;
}

Value ModelBuilder::outlined(StringRef name, llvm::function_ref<Value()> body) {
  if (failed())
    return {};
  OpBuilder::InsertPoint caller = b.saveInsertionPoint();
  b.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  size_t firstCache = cacheOutputs.size();
  SmallVector<Value> results = {body()};
  // Caches updated inside are returned too, and rebound to the call's results.
  for (size_t i = firstCache; i < cacheOutputs.size(); ++i)
    results.push_back(cacheOutputs[i].second);
  if (failed() || !results[0]) {
    b.restoreInsertionPoint(caller);
    fn.erase();
    if (!failed())
      error(config.path + ": internal error: outlined " + name +
            " produced no value");
    return {};
  }
  func::ReturnOp::create(b, loc, results);
  // What the body used from the enclosing function becomes arguments.
  // (getUsedValuesDefinedAbove only sees values of enclosing regions; the
  // caller is a sibling function.)
  llvm::SetVector<Value> captured;
  fn.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!fn->isAncestor(v.getParentRegion()->getParentOp()))
        captured.insert(v);
  });
  for (Value v : captured) {
    BlockArgument arg = entry->addArgument(v.getType(), loc);
    v.replaceUsesWithIf(arg, [&](OpOperand &use) {
      return fn->isProperAncestor(use.getOwner());
    });
  }
  fn.setType(b.getFunctionType(entry->getArgumentTypes(),
                               ValueRange(results).getTypes()));

  // Reuse an identical earlier function (compared by its printed form).
  std::string text;
  {
    StringAttr own = fn.getSymNameAttr();
    fn.setSymName("outlined");
    llvm::raw_string_ostream os(text);
    fn->print(os, OpPrintingFlags().useLocalScope());
    fn.setSymNameAttr(own);
  }
  auto [it, inserted] = outlinedBodies.try_emplace(text, fn);
  if (!inserted)
    fn.erase();
  b.restoreInsertionPoint(caller);
  auto call = func::CallOp::create(b, loc, it->second, captured.getArrayRef());
  for (size_t i = firstCache; i < cacheOutputs.size(); ++i)
    cacheOutputs[i].second = call.getResult(1 + (i - firstCache));
  return call.getResult(0);
}

} // namespace dat
