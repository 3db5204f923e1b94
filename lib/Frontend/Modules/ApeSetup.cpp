//===- ApeSetup.cpp - APE's positional module for its attention -----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The positional module's kwargs, weights and inputs read once for every
// layer's attention (spec §9.3): its maps (at compile time from the
// primitives, or in the rotary form, or at run time for trees), the
// mediator, the key mask and the distance decay.
//
//===----------------------------------------------------------------------===//

#include "ApeSetup.h"
#include "Modules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace llvm;
using namespace mlir;

namespace dat {

bool ApeSetup::finishInputs(ModelBuilder &mb, Value x) {
  // Mediator [1|B, L, L, 1, 1] -> the per-pair score scale [1|B, L, L].
  if (mb.hasInput("mediator")) {
    Value m = mb.input("mediator", 5);
    if (!m)
      return false;
    auto mt = cast<RankedTensorType>(m.getType());
    if (mt.getRank() != 5 || !mb.sameDim(m, 1, x, 1) ||
        !mb.sameDim(m, 2, x, 1) || mt.getDimSize(3) != 1 ||
        mt.getDimSize(4) != 1 ||
        (mt.getDimSize(0) != 1 && !mb.sameDim(m, 0, x, 0))) {
      std::string L = mb.sizeText(x, 1);
      mb.error(mb.config.path + ": inputs.mediator: expected [1 or " +
               mb.sizeText(x, 0) + ", " + L + ", " + L +
               ", 1, 1] (a multiplicative per-pair scale)");
      return false;
    }
    mediator = tensor::CollapseShapeOp::create(
        mb.b, mb.loc, m, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
  }
  if (mb.hasInput("key_mask"))
    keyMask = mb.boolInput("key_mask", x, {0, 1});
  if (mb.failed())
    return false;
  return true;
}

/// Switches `setup` to the rotary form when every primitive has one (an
/// even d up to maxRotaryDim, and Q·R·Qᵀ reproducing W; see rotaryForm) and
/// the axes' positions share their batch dim; otherwise the d×d maps stay.
static void useRotaryForm(ModelBuilder &mb, ApeSetup &setup,
                          ArrayRef<Value> positions, int64_t size) {
  int64_t axes = positions.size(), heads = setup.heads, d = setup.mapDim;
  int64_t count = axes * heads, half = d / 2;
  for (Value p : positions)
    if (cast<RankedTensorType>(p.getType()).getDimSize(0) !=
        cast<RankedTensorType>(positions[0].getType()).getDimSize(0))
      return;
  // The tables' size, and the compile-time work: a d×d eigenproblem per
  // primitive (bounded so that an absurd head count cannot stall datc).
  if (d % 2 != 0 || d > maxRotaryDim ||
      (size + 1) * count * half * 2 > (int64_t(1) << 24) ||
      count * d * d * d > (int64_t(1) << 27))
    return;
  std::vector<float> primitives =
      mb.weightValues("positional_encoder._primitives", {count, d, d});
  if (mb.failed())
    return;
  auto forms = std::make_shared<std::vector<RotaryForm>>();
  for (int64_t n = 0; n < count; ++n) {
    std::optional<RotaryForm> form = rotaryForm(&primitives[n * d * d], d);
    if (!form)
      return;
    forms->push_back(std::move(*form));
  }
  setup.forms = forms;
  // Tables [size+1, count, d/2] of cos(p·θ), sin(p·θ), gathered like the
  // maps (index p holds W^p) and concatenated over the axes.
  for (bool isSin : {false, true}) {
    Value table = mb.derivedWeight(
        isSin ? "positional_encoder.rotary_sin"
              : "positional_encoder.rotary_cos",
        {size + 1, count, half},
        {{"positional_encoder._primitives", {count, d, d}}},
        [forms, size, count, half, isSin](const std::vector<const float *> &,
                                          float *out) {
          for (int64_t p = 0; p <= size; ++p)
            for (int64_t n = 0; n < count; ++n)
              for (int64_t m = 0; m < half; ++m) {
                double angle = double(p) * (*forms)[n].angles[m];
                out[(p * count + n) * half + m] = static_cast<float>(
                    isSin ? std::sin(angle) : std::cos(angle));
              }
        });
    Value gathered;
    for (int64_t axis = 0; axis < axes; ++axis) {
      Value g = gatherAtPositions(mb, table, positions[axis], size,
                                  axis * heads, heads, false);
      gathered = gathered ? concatLast(mb, gathered, g) : g;
    }
    (isSin ? setup.sin : setup.cos) = gathered;
  }
}

std::optional<ApeSetup> readApeSetup(ModelBuilder &mb, ApeMaps kind,
                                     int64_t heads, int64_t dim) {
  ApeSetup setup;
  bool grid = kind == ApeMaps::Grid, tree = kind == ApeMaps::Branching;
  setup.grid = grid;
  int64_t axes = 1, branching = 0;
  static constexpr const char *names[] = {"Sequential", "Grid", "Branching"};
  mb.withKwargs("positional_encoder", names[static_cast<int>(kind)], [&] {
    if (grid)
      axes = mb.intArg("num_axes");
    setup.mapDim = mb.intArg("dim");
    if (tree)
      branching = mb.intArg("branching_factor");
    setup.heads = mb.intArg("num_heads");
  });
  const json::Value *sizeV = mb.config.call.get("precompute_size");
  std::optional<int64_t> size = sizeV ? sizeV->getAsInteger() : std::nullopt;
  if (mb.failed())
    return std::nullopt;
  // Trees need no table: without precompute_size the program computes each
  // node's map from its path.
  bool atRunTime = tree && !sizeV;
  if (!atRunTime && (!size || *size < 1 || *size > (1 << 20))) {
    mb.error(mb.config.path +
             ": call.precompute_size: expected an integer in "
             "[1, 2^20] (" +
             (tree ? "the largest tree node id; or none: the maps from the "
                     "paths at run time"
                   : "the largest position") +
             ")");
    return std::nullopt;
  }
  std::optional<double> decayBase = readDistanceDecay(mb, std::nullopt);
  if (mb.failed())
    return std::nullopt;
  if (grid && axes != 2) {
    mb.error(mb.config.path + ": kwargs.positional_encoder.num_axes: the "
                              "reference's Grid is hard-wired to 2 axes");
    return std::nullopt;
  }
  if (heads <= 0 || dim % heads || setup.heads != heads ||
      setup.mapDim * axes != dim / heads) {
    mb.error(mb.config.path + ": kwargs: the maps (" + Twine(axes) + " × " +
             Twine(setup.mapDim) + " per head, " + Twine(setup.heads) +
             " heads) must cover each attention head (dim " + Twine(dim) +
             " / " + Twine(heads) + " heads)");
    return std::nullopt;
  }
  if (tree && (branching < 1 || branching > 1024)) {
    mb.error(mb.config.path + ": kwargs.positional_encoder.branching_factor: "
                              "expected an integer in [1, 1024]");
    return std::nullopt;
  }
  int64_t mapDim = setup.mapDim;
  if (heads < 1 || mapDim < 1 || mapDim > 4096) {
    mb.error(mb.config.path + ": kwargs.positional_encoder: expected "
                              "num_heads >= 1 and dim in [1, 4096]");
    return std::nullopt;
  }
  Value x = mb.input("x", 3);
  if (mb.failed() || !x)
    return std::nullopt;
  SmallVector<Value> positions;
  for (StringRef pos : grid ? SmallVector<StringRef>{"x_pos", "y_pos"}
                            : SmallVector<StringRef>{"positions"}) {
    Value p = mb.input(pos);
    if (!p)
      return std::nullopt;
    auto pt = cast<RankedTensorType>(p.getType());
    if (!pt.getElementType().isInteger(64) || pt.getRank() != 2 ||
        !mb.sameDim(p, 1, x, 1) ||
        (pt.getDimSize(0) != 1 && !mb.sameDim(p, 0, x, 0))) {
      mb.error(mb.config.path + ": inputs." + pos + ": expected int64 [" +
               mb.sizeText(x, 0) + " or 1, " + mb.sizeText(x, 1) + "]");
      return std::nullopt;
    }
    // Tree positions <= 0 are the root (SOS, padding); sequence and grid
    // positions index the table like Python, negative from the end. Without
    // a table, tree nodes go as deep as the reference's paths (16).
    int64_t largest = size.value_or(0); // set unless atRunTime
    mb.inputRange(pos,
                  tree ? std::numeric_limits<int64_t>::min() : -(largest + 1),
                  atRunTime ? maxTreeNode(branching) : largest);
    positions.push_back(p);
  }
  setup.axes = positions.size();
  if (decayBase) {
    if (mb.hasInput("mediator")) {
      mb.error(mb.config.path + ": call.distance_decay: the config also "
                                "declares inputs.mediator; give one of them");
      return std::nullopt;
    }
    setup.decay = ApeDecay::make(mb,
                                 tree   ? ApeDistance::Tree
                                 : grid ? ApeDistance::Grid
                                        : ApeDistance::Sequence,
                                 *decayBase, positions, branching);
  }
  if (atRunTime) {
    // In a function: the loop's second buffer is freed when it returns.
    setup.maps.push_back(mb.outlined("tree_maps", [&] {
      return treeMapsAtRunTime(mb, positions[0], branching, heads, mapDim);
    }));
    return setup.finishInputs(mb, x) ? std::optional(setup) : std::nullopt;
  }

  if (!tree && !mb.config.generalOrthogonalMaps)
    useRotaryForm(mb, setup, positions, *size);

  // The d×d maps: what the attention applies without the rotary form, and
  // the module's `maps` outputs.
  bool wantMaps = mb.wantsOutput("maps") || mb.wantsOutput("maps_x") ||
                  mb.wantsOutput("maps_y");
  if (setup.forms && !wantMaps)
    return setup.finishInputs(mb, x) ? std::optional(setup) : std::nullopt;
  // The table is a weight of the program: keep it to at most 2^24 floats.
  int64_t count = tree ? 1 : axes * heads;
  if ((*size + 1) * count * mapDim * mapDim > (int64_t(1) << 24)) {
    mb.error(mb.config.path + ": call.precompute_size: a table of " +
             Twine(*size + 1) + " × " + Twine(count) + " maps of " +
             Twine(mapDim) + "×" + Twine(mapDim) +
             " exceeds 2^24 floats; lower precompute_size");
    return std::nullopt;
  }
  std::vector<int64_t> tableShape = {*size + 1, count, mapDim, mapDim};
  int64_t tableSize = *size;
  Value table;
  if (tree) {
    // Only the first `branching_factor` primitives are used, shared by all
    // heads; the rest are dead parameters of the reference.
    table = mb.derivedWeight(
        "positional_encoder.maps_table", tableShape,
        {{"positional_encoder._primitives",
          {branching * heads + 1, mapDim, mapDim}},
         {"positional_encoder.identity", {1, 1, mapDim, mapDim}}},
        [branching, mapDim, tableSize](const std::vector<const float *> &in,
                                       float *out) {
          treePathTable(in[0], in[1], branching, mapDim, tableSize, out);
        });
  } else {
    table = mb.derivedWeight(
        "positional_encoder.maps_table", tableShape,
        {{"positional_encoder._primitives", {count, mapDim, mapDim}}},
        [count, mapDim, tableSize](const std::vector<const float *> &in,
                                   float *out) {
          orthogonalPowerTable(in[0], count, mapDim, tableSize, out);
        });
  }
  for (auto [axis, p] : llvm::enumerate(positions))
    setup.maps.push_back(gatherAtPositions(mb, table, p, *size, axis * heads,
                                           tree ? 1 : heads, tree));
  return setup.finishInputs(mb, x) ? std::optional(setup) : std::nullopt;
}

} // namespace dat
