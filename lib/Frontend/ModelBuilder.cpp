//===- ModelBuilder.cpp - building dat IR from a model description --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/ModelBuilder.h"

#include "dat/Dialect/Dat/IR/DatAttrs.h"
#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

#include <cmath>

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
    addArgument({SignatureEntry::Input, in.name, in.shape, in.dtype});
}

Value ModelBuilder::addArgument(SignatureEntry entry) {
  auto type = RankedTensorType::get(entry.shape,
                                    elementType(b.getContext(), entry.dtype));
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

const json::Value *ModelBuilder::kwarg(StringRef key) {
  readKwargs.insert(key.str());
  const json::Value *v = kwargs->get(key);
  return v && v->kind() != json::Value::Null ? v : nullptr;
}

std::string ModelBuilder::where(StringRef key) const {
  return config.path + ": " + kwargsPath + "." + key.str();
}

void ModelBuilder::reportUnread(const json::Object &object,
                                const std::set<std::string> &read,
                                StringRef className) {
  std::vector<std::string> keys;
  for (const auto &kv : object)
    keys.push_back(kv.first.str());
  llvm::sort(keys);
  for (const std::string &key : keys)
    if (!read.count(key))
      error(where(key) + ": not an argument of " + className);
}

void ModelBuilder::withKwargs(StringRef key, StringRef className,
                              llvm::function_ref<void()> body) {
  static const json::Object empty;
  const json::Value *v = kwarg(key);
  const json::Object *nested = v ? v->getAsObject() : &empty;
  if (!nested) {
    error(where(key) + ": expected an object");
    nested = &empty;
  }
  const json::Object *outer = kwargs;
  std::string outerPath = kwargsPath;
  std::set<std::string> outerRead = std::move(readKwargs);
  kwargs = nested;
  kwargsPath = outerPath + "." + key.str();
  readKwargs.clear();
  body();
  reportUnread(*nested, readKwargs, className);
  kwargs = outer;
  kwargsPath = outerPath;
  readKwargs = std::move(outerRead);
}

int64_t ModelBuilder::intArg(StringRef key) {
  if (!kwarg(key)) {
    error(where(key) + ": required by " + config.module + " but missing");
    return 1;
  }
  return intArg(key, 1);
}

int64_t ModelBuilder::layersArg(StringRef key) {
  int64_t n = intArg(key);
  if (!failed() && n > kMaxLayers) {
    error(where(key) + ": " + Twine(n) + " layers; dat builds at most " +
          Twine(kMaxLayers));
    return 0;
  }
  return n;
}

int64_t ModelBuilder::intArg(StringRef key, int64_t dflt) {
  return optIntArg(key).value_or(dflt);
}

std::optional<int64_t> ModelBuilder::optIntArg(StringRef key) {
  const json::Value *v = kwarg(key);
  if (!v)
    return std::nullopt;
  std::optional<int64_t> i = v->getAsInteger();
  if (!i) {
    error(where(key) + ": expected an integer");
    return std::nullopt;
  }
  if (*i < 0 || *i > (int64_t(1) << 31)) {
    error(where(key) + ": " + Twine(*i) + " is out of range [0, 2^31]");
    return std::nullopt;
  }
  return i;
}

bool ModelBuilder::boolArg(StringRef key, bool dflt) {
  const json::Value *v = kwarg(key);
  if (!v)
    return dflt;
  std::optional<bool> r = v->getAsBoolean();
  if (!r) {
    error(where(key) + ": expected true or false");
    return dflt;
  }
  return *r;
}

std::optional<double> ModelBuilder::optFloatArg(StringRef key) {
  const json::Value *v = kwarg(key);
  if (!v)
    return std::nullopt;
  std::optional<double> r = v->getAsNumber();
  if (!r)
    error(where(key) + ": expected a number");
  return r;
}

double ModelBuilder::floatArg(StringRef key, double dflt) {
  return optFloatArg(key).value_or(dflt);
}

std::string ModelBuilder::stringArg(StringRef key, StringRef dflt) {
  const json::Value *v = kwarg(key);
  if (!v)
    return dflt.str();
  std::optional<StringRef> s = v->getAsString();
  if (!s) {
    error(where(key) + ": expected a string");
    return dflt.str();
  }
  return s->str();
}

SmallVector<int64_t> ModelBuilder::intListArg(StringRef key, size_t n) {
  SmallVector<int64_t> out;
  const json::Value *v = kwarg(key);
  const json::Array *a = v ? v->getAsArray() : nullptr;
  if (a && a->size() == n)
    for (const json::Value &e : *a)
      if (std::optional<int64_t> i = e.getAsInteger();
          i && *i > 0 && *i <= (int64_t(1) << 31))
        out.push_back(*i);
  if (out.size() != n) {
    error(where(key) + ": expected a list of " + Twine(n) +
          " positive integers");
    out.assign(n, 1);
  }
  return out;
}

bool ModelBuilder::boolCall(StringRef key, bool dflt) {
  const json::Value *v = config.call.get(key);
  if (!v || v->kind() == json::Value::Null)
    return dflt;
  std::optional<bool> r = v->getAsBoolean();
  if (!r) {
    error(config.path + ": call." + key + ": expected true or false");
    return dflt;
  }
  return *r;
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
  MLIRContext *ctx = b.getContext();
  auto boolTy = RankedTensorType::get(shape, b.getI1Type());
  AffineMap id = AffineMap::getMultiDimIdentityMap(shape.size(), ctx);
  return linalg::GenericOp::create(
             b, loc, boolTy, ValueRange{v},
             ValueRange{tensor::EmptyOp::create(b, loc, shape, b.getI1Type())},
             ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(shape.size(),
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
    auto type = cast<RankedTensorType>(it->second.getType());
    if (!out.shape.empty() && type.getShape() != ArrayRef<int64_t>(out.shape))
      error(config.path + ": outputs." + out.name +
            ": the config's shape does not match what " + config.module +
            " computes");
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
  for (const TensorSpec &out : config.outputs) {
    Value value = outputs[out.name];
    // An output declared without a shape has the one the module computes.
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    results.push_back(value);
    entries.push_back({SignatureEntry::Output, out.name,
                       std::vector<int64_t>(shape.begin(), shape.end()),
                       out.dtype});
  }
  for (auto &[name, value] : cacheOutputs) {
    results.push_back(value);
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    entries.push_back({SignatureEntry::Output, name,
                       std::vector<int64_t>(shape.begin(), shape.end()),
                       "float32"});
  }
  func::ReturnOp::create(b, loc, results);
  Block &body = func.getBody().front();
  func.setType(b.getFunctionType(body.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
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
    return b.getNamedAttr(mlir::dat::DatDialect::kProgramValueAttrName,
                          mlir::dat::ProgramValueAttr::get(b.getContext(), kind,
                                                           e.name, lo, hi,
                                                           /*permutation=*/{}));
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
  if (mlir::failed(verify(*module)))
    return createStringError("%s: internal error: the IR built for %s does "
                             "not verify",
                             config.path.c_str(), config.module.c_str());
  return std::move(module);
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

Value ModelBuilder::emptyLike(ArrayRef<int64_t> shape) {
  return tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
}

Value ModelBuilder::linear(Value x, StringRef prefix, int64_t out, bool bias) {
  if (failed() || !x)
    return {};
  int64_t in = cast<RankedTensorType>(x.getType()).getShape().back();
  Value w = weight((prefix + ".weight").str(), {out, in});
  return linear(x, w, bias ? weight((prefix + ".bias").str(), {out}) : Value());
}

Value ModelBuilder::linear(Value x, Value w, Value bv) {
  if (failed() || !x || !w)
    return {};
  auto xTy = cast<RankedTensorType>(x.getType());
  int64_t rank = xTy.getRank();
  int64_t out = cast<RankedTensorType>(w.getType()).getDimSize(0);
  SmallVector<int64_t> shape(xTy.getShape());
  shape.back() = out;
  Value init;
  MLIRContext *ctx = b.getContext();
  if (bv) {
    // Start from the broadcast bias, then accumulate x·Wᵀ onto it.
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    init = linalg::GenericOp::create(
               b, loc, RankedTensorType::get(shape, b.getF32Type()),
               ValueRange{bv}, ValueRange{emptyLike(shape)}, maps, iters,
               [](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, args[0]);
               })
               .getResult(0);
  } else {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    init = linalg::FillOp::create(b, loc, zero, emptyLike(shape)).getResult(0);
  }
  // Loops: the rank-1 batch dims, o, then the reduction i.
  SmallVector<AffineExpr> batch;
  for (int64_t d = 0; d < rank - 1; ++d)
    batch.push_back(b.getAffineDimExpr(d));
  AffineExpr o = b.getAffineDimExpr(rank - 1), i = b.getAffineDimExpr(rank);
  SmallVector<AffineExpr> xe(batch), ye(batch);
  xe.push_back(i);
  ye.push_back(o);
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, xe, ctx),
                                 AffineMap::get(rank + 1, 0, {o, i}, ctx),
                                 AffineMap::get(rank + 1, 0, ye, ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x, w}, ValueRange{init}, maps,
             iters,
             [](OpBuilder &nb, Location nl, ValueRange args) {
               Value p = arith::MulFOp::create(nb, nl, args[0], args[1]);
               Value s = arith::AddFOp::create(nb, nl, args[2], p);
               linalg::YieldOp::create(nb, nl, s);
             })
      .getResult(0);
}

Value ModelBuilder::splitHeads(Value x, int64_t heads) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  int64_t width = t.getShape().back();
  if (heads <= 0 || width % heads != 0) {
    error(config.path + ": cannot split " + Twine(width) + " features into " +
          Twine(heads) + " heads");
    return {};
  }
  SmallVector<int64_t> shape = {t.getDimSize(0), t.getDimSize(1), heads,
                                width / heads};
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), x,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

Value ModelBuilder::swapSeqHeads(Value x) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape = {t.getDimSize(0), t.getDimSize(2),
                                t.getDimSize(1), t.getDimSize(3)};
  return linalg::TransposeOp::create(b, loc, x, emptyLike(shape),
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

Value ModelBuilder::mergeHeads(Value x) {
  if (failed() || !x)
    return {};
  Value y = swapSeqHeads(x);
  auto t = cast<RankedTensorType>(y.getType());
  SmallVector<int64_t> shape = {t.getDimSize(0), t.getDimSize(1),
                                t.getDimSize(2) * t.getDimSize(3)};
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), y,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// A parallel elementwise generic over same-shaped `inputs` (plus extra
/// inputs with their own maps) producing a tensor like `like`.
static Value
elementwise(ModelBuilder &mb, Value like, ValueRange inputs,
            ArrayRef<AffineMap> inputMaps,
            llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto t = cast<RankedTensorType>(like.getType());
  MLIRContext *ctx = mb.b.getContext();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(t.getRank(), ctx));
  return linalg::GenericOp::create(
             mb.b, mb.loc, t, inputs, ValueRange{mb.emptyLike(t.getShape())},
             maps,
             SmallVector<utils::IteratorType>(t.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args));
             })
      .getResult(0);
}

bool ModelBuilder::sameShape(Value a, Value c) {
  if (a.getType() == c.getType())
    return true;
  // Residual streams of different widths: the inputs' shapes disagree with
  // the configured dimensions somewhere the module checks do not catch.
  std::string sa, sc;
  llvm::raw_string_ostream oa(sa), oc(sc);
  oa << a.getType();
  oc << c.getType();
  error(config.path +
        ": inputs: the tensors' shapes do not fit the model's "
        "dimensions (" +
        sa + " vs " + sc + "): check the inputs against d_model/dim");
  return false;
}

/// op(a, c) elementwise on two tensors of one shape.
template <typename ArithOp>
static Value binary(ModelBuilder &mb, Value a, Value c) {
  AffineMap id = AffineMap::getMultiDimIdentityMap(
      cast<RankedTensorType>(a.getType()).getRank(), mb.b.getContext());
  return elementwise(mb, a, {a, c}, {id, id},
                     [](OpBuilder &nb, Location nl, ValueRange v) {
                       return Value(ArithOp::create(nb, nl, v[0], v[1]));
                     });
}

Value ModelBuilder::add(Value a, Value c) {
  if (failed() || !a || !c || !sameShape(a, c))
    return {};
  return binary<arith::AddFOp>(*this, a, c);
}

Value ModelBuilder::mul(Value a, Value c) {
  if (failed() || !a || !c || !sameShape(a, c))
    return {};
  return binary<arith::MulFOp>(*this, a, c);
}

namespace {
/// The maps of a reduction over the last axis of a rank-r tensor.
struct LastAxis {
  AffineMap id, row, last;
  SmallVector<utils::IteratorType> reduce;
  SmallVector<int64_t> rowShape;
};
} // namespace

static LastAxis lastAxis(OpBuilder &b, RankedTensorType t) {
  int64_t rank = t.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> rowExprs;
  for (int64_t i = 0; i + 1 < rank; ++i)
    rowExprs.push_back(b.getAffineDimExpr(i));
  LastAxis m;
  m.id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  m.row = AffineMap::get(rank, 0, rowExprs, ctx);
  m.last = AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx);
  m.reduce.assign(rank - 1, utils::IteratorType::parallel);
  m.reduce.push_back(utils::IteratorType::reduction);
  m.rowShape.assign(t.getShape().begin(), t.getShape().end() - 1);
  return m;
}

/// Σ over the last axis of f(inputs), into a zero-filled row tensor.
static Value
sumLastAxis(ModelBuilder &mb, const LastAxis &m, ValueRange ins,
            ArrayRef<AffineMap> inMaps,
            llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  Value zero = arith::ConstantOp::create(mb.b, mb.loc, mb.b.getF32FloatAttr(0));
  Value init =
      linalg::FillOp::create(mb.b, mb.loc, zero, mb.emptyLike(m.rowShape))
          .getResult(0);
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(m.row);
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ins, ValueRange{init}, maps,
             m.reduce,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = f(nb, nl, args.drop_back());
               linalg::YieldOp::create(
                   nb, nl,
                   Value(arith::AddFOp::create(nb, nl, args.back(), v)));
             })
      .getResult(0);
}

Value ModelBuilder::rmsNorm(Value x, StringRef prefix, double eps) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  int64_t d = t.getShape().back();
  Value w = weight((prefix + ".weight").str(), {d});
  if (failed())
    return {};
  LastAxis m = lastAxis(b, t);
  Value sq = sumLastAxis(
      *this, m, {x}, {m.id}, [](OpBuilder &nb, Location nl, ValueRange a) {
        return Value(arith::MulFOp::create(nb, nl, a[0], a[0]));
      });
  float n = static_cast<float>(d), e = static_cast<float>(eps);
  return elementwise(*this, x, {x, sq, w}, {m.id, m.row, m.last},
                     [n, e](OpBuilder &nb, Location nl, ValueRange a) {
                       auto c = [&](float v) {
                         return arith::ConstantOp::create(
                             nb, nl, nb.getF32FloatAttr(v));
                       };
                       Value mean = arith::DivFOp::create(nb, nl, a[1], c(n));
                       Value inv = math::RsqrtOp::create(
                           nb, nl, arith::AddFOp::create(nb, nl, mean, c(e)));
                       Value y = arith::MulFOp::create(nb, nl, a[0], inv);
                       return Value(arith::MulFOp::create(nb, nl, y, a[2]));
                     });
}

Value ModelBuilder::activation(Value x, StringRef name) {
  if (failed() || !x || name == "identity")
    return x;
  AffineMap id = AffineMap::getMultiDimIdentityMap(
      cast<RankedTensorType>(x.getType()).getRank(), b.getContext());
  std::string n = name.str();
  return elementwise(
      *this, x, {x}, {id}, [n](OpBuilder &nb, Location nl, ValueRange v) {
        Value a = v[0];
        auto c = [&](double d) {
          return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(d));
        };
        auto sigmoid = [&](Value y) {
          Value e =
              math::ExpOp::create(nb, nl, arith::NegFOp::create(nb, nl, y));
          return Value(arith::DivFOp::create(
              nb, nl, c(1.0), arith::AddFOp::create(nb, nl, c(1.0), e)));
        };
        if (n == "relu")
          return Value(arith::MaximumFOp::create(nb, nl, a, c(0.0)));
        if (n == "sigmoid")
          return sigmoid(a);
        if (n == "tanh")
          return Value(math::TanhOp::create(nb, nl, a));
        if (n == "silu")
          return Value(arith::MulFOp::create(nb, nl, a, sigmoid(a)));
        Value half = arith::MulFOp::create(nb, nl, c(0.5), a);
        Value inner;
        if (n == "gelu_erf") {
          inner = math::ErfOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, a, c(M_SQRT1_2)));
        } else { // gelu, tanh form
          Value a3 = arith::MulFOp::create(nb, nl, a,
                                           arith::MulFOp::create(nb, nl, a, a));
          Value t = arith::AddFOp::create(
              nb, nl, a, arith::MulFOp::create(nb, nl, c(0.044715), a3));
          inner = math::TanhOp::create(
              nb, nl,
              arith::MulFOp::create(nb, nl, c(std::sqrt(2.0 / M_PI)), t));
        }
        return Value(arith::MulFOp::create(
            nb, nl, half, arith::AddFOp::create(nb, nl, c(1.0), inner)));
      });
}

Value ModelBuilder::layerNorm(Value x, StringRef prefix, double eps,
                              bool bias) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  int64_t d = t.getShape().back();
  Value w = weight((prefix + ".weight").str(), {d});
  Value bv = bias ? weight((prefix + ".bias").str(), {d}) : Value();
  if (failed())
    return {};
  LastAxis m = lastAxis(b, t);
  // Two passes, as nn.LayerNorm: mean, then the biased mean of (x − mean)².
  float n = static_cast<float>(d), e = static_cast<float>(eps);
  Value sum =
      sumLastAxis(*this, m, {x}, {m.id},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  Value sq = sumLastAxis(
      *this, m, {x, sum}, {m.id, m.row},
      [n](OpBuilder &nb, Location nl, ValueRange a) {
        Value mean = arith::DivFOp::create(
            nb, nl, a[1],
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(n)));
        Value dlt = arith::SubFOp::create(nb, nl, a[0], mean);
        return Value(arith::MulFOp::create(nb, nl, dlt, dlt));
      });
  SmallVector<Value> ins = {x, sum, sq, w};
  SmallVector<AffineMap> maps = {m.id, m.row, m.row, m.last};
  if (bv) {
    ins.push_back(bv);
    maps.push_back(m.last);
  }
  return elementwise(
      *this, x, ins, maps, [n, e](OpBuilder &nb, Location nl, ValueRange a) {
        auto c = [&](float v) {
          return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
        };
        Value mean = arith::DivFOp::create(nb, nl, a[1], c(n));
        Value var = arith::DivFOp::create(nb, nl, a[2], c(n));
        Value inv = math::RsqrtOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, var, c(e)));
        Value y = arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, a[0], mean), inv);
        y = arith::MulFOp::create(nb, nl, y, a[3]);
        if (a.size() > 4)
          y = arith::AddFOp::create(nb, nl, y, a[4]);
        return y;
      });
}

} // namespace dat
