//===- Driver.h - datc: model description → program -------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The driver reads files, runs one pass pipeline (--dat-program-pipeline)
// and writes files; the frontend decides what the program holds, the
// pipeline everything between the frontend's module and LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DRIVER_DRIVER_H
#define DAT_DRIVER_DRIVER_H

#include "dat/Frontend/Config.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace dat {

/// What `datc compile` writes.
enum class Emit {
  Exe,     // the program: an executable and its weights file
  Library, // the program as a shared library (C API: dat_program.h) and
           // its weights file
  Dat,     // the frontend's module (dat dialect on tensors), before any pass
  LLVM,    // the LLVM dialect module after --dat-program-pipeline
  LLVMIR,  // that module translated to LLVM IR
  PTX,     // the kernels' PTX (target=cuda)
};

struct CompileOptions {
  /// A config file, or a folder: a golden case's or a save_pretrained one
  /// (its weights, model.safetensors, unless given).
  std::string configPath;
  /// --module, --batch, --seq-len: how a save_pretrained folder is read.
  FolderOptions folder;
  std::string weightsPath;            // or:
  std::optional<uint64_t> randomSeed; // --random-weights SEED
  Emit emit = Emit::Exe;
  std::string outputPath;
  /// --verbose: name each stage as it starts; --timing: every stage's time
  /// (and the pipeline's passes') at the end.
  bool verbose = false, timing = false;
  /// The CPU the host code is compiled for (LLVM's name): "" is this
  /// host's, with its features; e.g. "x86-64-v2" for a portable program.
  std::string cpu;
  // Frontend: APE's sequence/grid maps in rotary form (false: as d×d
  // matrices, --general-maps).
  bool rotaryMaps = true;
  /// The options of --dat-program-pipeline in their textual form
  /// (docs/pipeline-options.md), e.g. "target=cuda precision=bf16";
  /// parsed and checked by the pipeline's own option parser.
  std::string pipeline;
};

/// Compiles a model description into `options.outputPath`: an executable
/// or a shared library with its weights in `<output>.weights`, or the IR of
/// an earlier stage.
/// Nothing is left at the output path on failure. The pass manager's
/// command-line options (--mlir-print-ir-after-all, --mlir-timing, ...)
/// apply where they were registered and parsed.
llvm::Error compileModel(const CompileOptions &options);

/// Whether the program the pipeline options describe stores its float
/// tensors in bf16 (an error if they do not parse).
llvm::Expected<bool> storesBF16(llvm::StringRef pipelineOptions);

/// `datc check`: compiles the golden case in `caseDir` with `options`'
/// pipeline, runs it on the case's inputs, compares every output with the
/// case's tolerance and prints a report ending in `PASS <case>` or
/// `FAIL <case>`. Returns true on PASS. With bf16 precision the inputs are
/// rounded to bf16 and outputs are compared with the looser bf16 tolerance
/// (docs/precision.md).
llvm::Expected<bool> checkCase(llvm::StringRef caseDir,
                               const CompileOptions &options,
                               llvm::raw_ostream &os);

/// Registers every dialect, extension and translation datc needs.
void registerDriverDialects(mlir::DialectRegistry &registry);

} // namespace dat

#endif // DAT_DRIVER_DRIVER_H
