//===- Pipelines.h - dat compilation pipelines ------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The pipelines live here, in C++, so that dat-opt, datc and the tests run
// exactly the same pass sequence.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_PIPELINES_PIPELINES_H
#define DAT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dat {

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every public function a C-callable "
                     "`_mlir_ciface_` wrapper (llvm.emit_c_interface)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tileAttention{
      *this, "tile-attention",
      llvm::cl::desc("Lower the attention-family ops through the flash tiling "
                     "(dat-tile-attention) instead of the N×N reference form"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> queryTile{
      *this, "query-tile", llvm::cl::desc("Query rows per attention tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> keyTile{
      *this, "key-tile", llvm::cl::desc("Keys per online-softmax block"),
      llvm::cl::init(64)};
};

/// dat on tensors → LLVM dialect for the host CPU: flash tiling of the
/// attention ops (unless disabled), decomposition of the rest,
/// bufferization, loops, LLVM.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `--dat-cpu-pipeline` (and later pipelines) with the pass
/// registry, for dat-opt.
void registerPipelines();

} // namespace mlir::dat

#endif // DAT_PIPELINES_PIPELINES_H
