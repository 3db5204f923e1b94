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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

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
    return b.getNamedAttr(
        mlir::dat::DatDialect::kProgramValueAttrName,
        mlir::dat::ProgramValueAttr::get(b.getContext(), kind, e.name, lo, hi,
                                         /*reference_shape=*/nullptr,
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

} // namespace dat
