//===- CAPI.cpp - the C API of a program built as a shared library --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// include/dat/Runtime/dat_program.h: the same runtime as the program's main
// (Call, Decoder), with errors returned instead of printed. datc links this
// into `--emit library` outputs and exports only the dat_program_* symbols.
//
//===----------------------------------------------------------------------===//

#include "dat/Runtime/dat_program.h"

#include "Program.h"
#include "ProgramMemory.h"

#include "dat/Runtime/ProgramABI.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>

extern "C" const char dat_manifest[];
extern "C" void dat_entry(void **argv);
extern "C" __attribute__((weak)) void dat_step(void **argv);

using namespace datrt;

struct dat_program {
  dat::json::Value manifest;
  std::unique_ptr<dat::SafeTensorsFile> weights;
  std::unique_ptr<Call> forward;
  std::unique_ptr<Decoder> decoder;
  std::vector<size_t> inputs; // forward's input arguments, in order
  bool allowNonFinite = false;
  std::mutex mutex;
};

namespace {

thread_local std::string lastError;

/// Runs `body`, turning a runtime failure into -1 and the thread's error.
template <typename F> int guarded(F &&body) {
  try {
    body();
    lastError.clear();
    return 0;
  } catch (const Failure &e) {
    lastError = e.what();
  } catch (const std::bad_alloc &) {
    lastError = "out of memory";
  }
  return -1;
}

/// The weights next to this library: <library>.weights.
std::string defaultWeightsPath() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<const void *>(&dat_program_create), &info) ||
      !info.dli_fname)
    fail("cannot find the library's own path for its weights file; pass "
         "the weights path");
  return std::string(info.dli_fname) + DAT_WEIGHTS_SUFFIX;
}

} // namespace

extern "C" {

int dat_program_api_version(void) { return DAT_PROGRAM_API_VERSION; }

const char *dat_program_manifest(void) { return dat_manifest; }

const char *dat_program_last_error(void) { return lastError.c_str(); }

dat_program *dat_program_create(const char *weightsPath, unsigned flags) {
  // As in the program's main: OpenMP workers spin 1 ms after a region
  // (read when the first region starts; the environment wins).
  ::setenv("KMP_BLOCKTIME", "1", /*overwrite=*/0);
  auto program = std::make_unique<dat_program>();
  int rc = guarded([&] {
    if (flags & ~DAT_PROGRAM_ALLOW_NONFINITE)
      fail("dat_program_create: unknown flags " + std::to_string(flags));
    program->allowNonFinite = flags & DAT_PROGRAM_ALLOW_NONFINITE;
    checkDevice();
    std::string error;
    if (!dat::json::parse(dat_manifest, program->manifest, error))
      fail("corrupt manifest: " + error);
    program->forward = std::make_unique<Call>(program->manifest, dat_entry);
    Call &forward = *program->forward;
    bool needWeights = false;
    for (size_t i = 0; i < forward.args.size(); ++i) {
      if (forward.args[i].kind == Slot::Weight)
        needWeights = true;
      else
        program->inputs.push_back(i);
    }
    if (const dat::json::Value *step = program->manifest.get("step"))
      if (dat_step)
        program->decoder = std::make_unique<Decoder>(*step, dat_step);
    if (!needWeights)
      return;
    std::string path = weightsPath ? weightsPath : defaultWeightsPath();
    program->weights = dat::SafeTensorsFile::open(path, error);
    if (!program->weights)
      fail(error);
    forward.bindWeights(*program->weights);
    if (program->decoder) {
      program->decoder->call.sharePacking(forward);
      program->decoder->call.bindWeights(*program->weights);
    }
  });
  return rc == 0 ? program.release() : nullptr;
}

int dat_program_run(dat_program *program, const void *const *inputs,
                    void *const *outputs) {
  if (!program) {
    lastError = "dat_program_run: no program";
    return -1;
  }
  std::lock_guard<std::mutex> lock(program->mutex);
  return guarded([&] {
    Call &forward = *program->forward;
    for (size_t k = 0; k < program->inputs.size(); ++k) {
      const Slot &s = forward.args[program->inputs[k]];
      if (!inputs || !inputs[k])
        fail("input '" + s.name + "' is not given");
      checkValues(s, inputs[k], "input '" + s.name + "'",
                  program->allowNonFinite,
                  "to run anyway, create the program with "
                  "DAT_PROGRAM_ALLOW_NONFINITE; in Python, "
                  "allow_nonfinite=True");
      forward.bind(program->inputs[k], inputs[k]);
    }
    for (size_t r = 0; r < forward.results.size(); ++r)
      if (!outputs || !outputs[r])
        fail("no buffer for output '" + forward.results[r].name + "'");
    forward.run();
    for (size_t r = 0; r < forward.results.size(); ++r)
      forward.copyResult(r, outputs[r]);
    forward.freeResults();
  });
}

int dat_program_set_dims(dat_program *program, int count,
                         const char *const *names, const int64_t *sizes) {
  if (!program || count < 0 || (count > 0 && (!names || !sizes))) {
    lastError = !program ? "dat_program_set_dims: no program"
                         : "dat_program_set_dims: no names or sizes";
    return -1;
  }
  std::lock_guard<std::mutex> lock(program->mutex);
  return guarded([&] {
    std::map<std::string, int64_t> dims;
    for (int i = 0; i < count; ++i) {
      if (!names[i])
        fail("dat_program_set_dims: name " + std::to_string(i) + " is null");
      if (!dims.insert({names[i], sizes[i]}).second)
        fail("dat_program_set_dims: '" + std::string(names[i]) +
             "' is given twice");
    }
    program->forward->setDims(dims);
  });
}

int dat_program_has_step(const dat_program *program) {
  return program && program->decoder ? 1 : 0;
}

int dat_program_step(dat_program *program, const int64_t *tokens,
                     void *logits) {
  if (!program || !program->decoder || !tokens || !logits) {
    lastError = !program || !program->decoder
                    ? "dat_program_step: this program has no decode step "
                      "(only language models have one)"
                    : "dat_program_step: no tokens or logits buffer";
    return -1;
  }
  std::lock_guard<std::mutex> lock(program->mutex);
  return guarded([&] {
    program->decoder->step(tokens, logits,
                           "tokens at position " +
                               std::to_string(program->decoder->position()));
  });
}

int64_t dat_program_position(const dat_program *program) {
  return program && program->decoder ? program->decoder->position() : 0;
}

int dat_program_reset(dat_program *program) {
  if (!program) {
    lastError = "dat_program_reset: no program";
    return -1;
  }
  std::lock_guard<std::mutex> lock(program->mutex);
  if (program->decoder)
    program->decoder->reset();
  lastError.clear();
  return 0;
}

void dat_program_destroy(dat_program *program) {
  delete program;
  datrt::releaseCachedBuffers();
}

} // extern "C"
