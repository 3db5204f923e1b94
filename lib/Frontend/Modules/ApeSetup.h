//===- ApeSetup.h - APE's positional module for its attention ---*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_MODULES_APESETUP_H
#define DAT_FRONTEND_MODULES_APESETUP_H

#include "ApePositions.h"

#include "dat/Frontend/OrthogonalMaps.h"

#include <memory>
#include <optional>
#include <vector>

namespace dat {

/// The positional module's maps (gathered at the input positions) and the
/// attention function's other inputs, shared by every layer (spec §9.3).
enum class ApeMaps { Sequential, Grid, Branching };

struct ApeSetup {
  bool grid = false;
  int64_t heads = 0, mapDim = 0;
  llvm::SmallVector<mlir::Value> maps; // [1|B, L, H, d, d] per axis
  mlir::Value mediator, keyMask;
  // The rotary form of sequence and grid maps (architecture item 3): each
  // (axis, head)'s W = Q·R(θ)·Qᵀ. Queries and keys are projected onto Q
  // (folded into the projection weights) and rotated by the learned angles
  // at their positions: cos/sin [1|B, L, H, axes·d/2]. Null: d×d maps.
  std::shared_ptr<const std::vector<RotaryForm>> forms;
  mlir::Value cos, sin;
  int64_t axes = 1;
  /// call.distance_decay: base^dist per pair, computed per tile.
  std::optional<ApeDecay> decay;
  /// The attention's per-pair score scale: the mediator input, or the
  /// decay (built here, at each attention, so that it is tiled there).
  mlir::Value scoreScale(ModelBuilder &mb) const {
    return mediator ? mediator : decay ? decay->decayAt(mb) : mlir::Value();
  }

  /// Reads the optional mediator and key mask; false after an error.
  bool finishInputs(ModelBuilder &mb, mlir::Value x);
};

/// The positional module's setup for an attention of `heads` heads over
/// `dim` features: each head's features must be exactly the maps' (checked
/// before anything is derived from the weights).
std::optional<ApeSetup> readApeSetup(ModelBuilder &mb, ApeMaps kind,
                                     int64_t heads, int64_t dim);

} // namespace dat

#endif // DAT_FRONTEND_MODULES_APESETUP_H
