/*===- dat_program.h - the C API of a compiled dat program ---------*- C -*-===*
 *
 * Part of the dat project: a compiler for relational-attention models.
 *
 * `datc compile CONFIG ... --emit library -o model.so` writes a shared
 * library (and its weights, model.so.weights) that exports exactly these
 * functions; the Python package (python/dat) calls them through ctypes.
 * The runtime inside links no LLVM.
 *
 * Tensors are contiguous row-major buffers the caller owns, of the dtype
 * and shape the manifest gives (dynamic dimensions at the sizes of
 * dat_program_set_dims): inputs in the order of the manifest's
 * `args` of kind "input" (sorted by name), outputs in the order of its
 * `results`. Nothing is copied out of or kept from an input after a call
 * returns. A dat_program runs one call at a time (calls from several
 * threads are serialized); its tiles run on the OpenMP threads of the
 * process (OMP_NUM_THREADS).
 *
 * Every function that can fail returns 0 (or a non-NULL pointer) on
 * success and -1 (NULL) on failure; dat_program_last_error() then says
 * why, naming the tensor and element at fault. A GPU program checks the
 * driver and device at create; an error of the GPU itself during a call
 * (a failed launch, out of device memory) still ends the process with its
 * message, as it does the program executable.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DAT_RUNTIME_DAT_PROGRAM_H
#define DAT_RUNTIME_DAT_PROGRAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DAT_PROGRAM_API_VERSION 2

/* dat_program_create flags. */
#define DAT_PROGRAM_ALLOW_NONFINITE 1u /* accept NaN/Inf float inputs */

typedef struct dat_program dat_program;

/* DAT_PROGRAM_API_VERSION of the library. */
int dat_program_api_version(void);

/* The manifest (JSON; include/dat/Runtime/ProgramABI.h describes it):
 * the inputs, weights and outputs of `forward` and, for language models,
 * of the decode `step`. Static storage. */
const char *dat_program_manifest(void);

/* Loads the weights (the safetensors file datc wrote; NULL: the library's
 * own, <library path>.weights), checks them against the manifest and
 * packs those the program reads transposed. */
dat_program *dat_program_create(const char *weights_path, unsigned flags);

/* Why the last failing call on this thread failed ("" if none). */
const char *dat_program_last_error(void);

/* forward: reads inputs[i] (the manifest's inputs, in order), writes
 * outputs[r] (its results, in order). Integer inputs outside their valid
 * range and (unless DAT_PROGRAM_ALLOW_NONFINITE) non-finite float inputs
 * are refused before anything runs. */
int dat_program_run(dat_program *program, const void *const *inputs,
                    void *const *outputs);

/* Sizes of the program's dynamic dimensions (the manifest's `dims`: a
 * config's dynamic_dims) for the next dat_program_run calls: names[i] is
 * given sizes[i], each in [1, its maximum]; every dynamic dimension must be
 * named. The inputs and outputs of those calls are contiguous buffers of
 * the shapes these sizes give. Until the first call, every dimension is at
 * its maximum (the manifest's `shape`). A program without dynamic
 * dimensions accepts count 0. */
int dat_program_set_dims(dat_program *program, int count,
                         const char *const *names, const int64_t *sizes);

/* Whether the program has a decode step (language models). */
int dat_program_has_step(const dat_program *program);

/* The decode step: runs tokens[b] (int64, one per batch row) at the next
 * position, updating the program's KV caches, and writes the logits
 * [B, vocab] (the dtype of the step's `logits` result) to `logits`.
 * Fails past max_block_size positions. */
int dat_program_step(dat_program *program, const int64_t *tokens, void *logits);

/* The next position dat_program_step fills (0 after create or reset). */
int64_t dat_program_position(const dat_program *program);

/* Zeroes the KV caches: the next step is at position 0. */
int dat_program_reset(dat_program *program);

void dat_program_destroy(dat_program *program);

#ifdef __cplusplus
}
#endif

#endif /* DAT_RUNTIME_DAT_PROGRAM_H */
