//===- Driver.h - datc: model description → program -------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DRIVER_DRIVER_H
#define DAT_DRIVER_DRIVER_H

#include "dat/Frontend/ModelBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace dat {

struct CompileOptions {
  std::string configPath;
  std::string weightsPath;            // or:
  std::optional<uint64_t> randomSeed; // --random-weights SEED
  std::string target = "cpu";         // cpu | cuda
  std::string emit = "exe";           // exe | mlir | llvm | ptx (cuda)
  std::string outputPath;
  // Attention lowering: flash tiles (query rows × keys; 0: the target's
  // default) or, with flash = false (CPU only), the N×N reference form.
  bool flash = true;
  int64_t queryTile = 0, keyTile = 0;
  // APE's sequence/grid maps in rotary form (false: as d×d matrices).
  bool rotaryMaps = true;
  // CPU only: run the GPU's block/thread mapping of the attention tiles as
  // sequential loops (dat-gpu-map-tiles emulate), to check it here.
  bool emulateGPUTiles = false;
  // Storage of float tensors (inputs, weights, outputs, activations):
  // "fp32", or "bf16" with f32 arithmetic (dat-narrow-storage).
  std::string precision = "fp32";
  // Projections: "generated" loops fused with their epilogues, or calls of
  // the runtime's GEMM, "library" (cuBLAS on the GPU).
  std::string gemm = "generated";
};

/// Compiles a model description into `options.outputPath`: an executable
/// with its weights in `<output>.weights`, or the IR of an earlier stage.
/// Nothing is left at the output path on failure.
llvm::Error compileModel(const CompileOptions &options);

/// The `forward` function of a model description, in the dat dialect.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModelModule(mlir::MLIRContext &ctx, const ModelConfig &config,
                 WeightSource &weights, std::vector<SignatureEntry> &signature);

/// Adds the program entry points and manifest (ProgramABI.h) to a module
/// already lowered to the LLVM dialect: `forward`, and the language models'
/// decode `step` when `stepSignature` is given.
llvm::Error
addProgramEntry(mlir::ModuleOp module,
                const std::vector<SignatureEntry> &signature,
                const std::vector<SignatureEntry> *stepSignature = nullptr);

/// `datc check`: compiles the golden case in `caseDir` with `options`'
/// target and attention lowering, runs it on the case's inputs, compares
/// every output with the case's tolerance and prints a report ending in
/// `PASS <case>` or `FAIL <case>`. Returns true on PASS. With bf16
/// precision the inputs are rounded to bf16 and outputs are compared with
/// the looser bf16 tolerance (docs/precision.md).
llvm::Expected<bool> checkCase(llvm::StringRef caseDir,
                               const CompileOptions &options,
                               llvm::raw_ostream &os);

/// Registers every dialect, extension and translation datc needs.
void registerDriverDialects(mlir::DialectRegistry &registry);

} // namespace dat

#endif // DAT_DRIVER_DRIVER_H
