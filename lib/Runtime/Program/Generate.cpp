//===- Generate.cpp - greedy decoding in a language model's program -------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// With the KV cache: the compiled `step` runs one token at a time (the
// prompt's tokens first, then each generated one), with caches that start
// zeroed and come back updated. With --full: the `forward` pass runs on the
// whole sequence so far (padded to its compiled length; causal, so padding
// after the last real token changes nothing) for every new token. Both
// print the same lines, so their tokens can be compared directly.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "dat/Runtime/ProgramABI.h"
#include "dat/Support/BFloat16.h"

#include <cstdio>

extern "C" void dat_entry(void **argv);
extern "C" __attribute__((weak)) void dat_step(void **argv);

namespace datrt {

/// Index of the largest logit (the first one on ties), per batch row; also
/// records the winning logit in `top`, so that the two ways of decoding can
/// be compared on values, not only on tokens.
static std::vector<int64_t> argmaxRows(const std::vector<float> &logits,
                                       int64_t batch, int64_t rows, int64_t row,
                                       int64_t vocab,
                                       std::vector<std::vector<float>> &top) {
  std::vector<int64_t> best(batch);
  for (int64_t b = 0; b < batch; ++b) {
    const float *v = &logits[(b * rows + row) * vocab];
    int64_t arg = 0;
    for (int64_t k = 1; k < vocab; ++k)
      if (v[k] > v[arg])
        arg = k;
    best[b] = arg;
    top[b].push_back(v[arg]);
  }
  return best;
}

int generate(const dat::json::Value &manifest,
             const dat::SafeTensorsFile &weights,
             const dat::SafeTensorsFile &inputs, long count, bool full) {
  const dat::json::Value *stepSection = manifest.get("step");
  if (!stepSection || !dat_step)
    fail("--generate: this program has no decode step (language models have "
         "one, except with rel_activation='softmax', whose relations see "
         "later tokens)");
  Decoder decoder(*stepSection, dat_step);
  const Slot &idx = decoder.tokens();
  int64_t batch = decoder.batch(), maxLen = decoder.maxLength();
  int64_t vocab = decoder.vocab();

  // The prompt: input.idx [B, T0] with ids in the vocabulary.
  const dat::TensorView *prompt = inputs.find("input.idx");
  if (!prompt || prompt->dtype != dat::DType::I64 ||
      prompt->shape.size() != 2 || prompt->shape[0] != batch ||
      prompt->shape[1] < 1)
    fail(inputs.path() + ": --generate needs 'input.idx', int64 [" +
         std::to_string(batch) + ", T0] with T0 >= 1 (the prompt)");
  int64_t promptLen = prompt->shape[1];
  std::vector<std::vector<int64_t>> seq(batch);
  const int64_t *ids = reinterpret_cast<const int64_t *>(prompt->data);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < promptLen; ++t) {
      int64_t id = ids[b * promptLen + t];
      if (id < idx.lo || id > idx.hi)
        fail(inputs.path() + ": tensor 'input.idx' element " +
             std::to_string(b * promptLen + t) + " is " + std::to_string(id) +
             ", outside the accepted range [" + std::to_string(idx.lo) + ", " +
             std::to_string(idx.hi) + "]");
      seq[b].push_back(id);
    }
  int64_t last = promptLen + count - 1; // positions 0 .. last-1 are run
  std::vector<std::vector<float>> top(batch);

  if (full) {
    Call forward(manifest, dat_entry);
    forward.bindWeights(weights);
    size_t fwdIdx = findSlot(forward.args, "idx");
    int64_t T = forward.args[fwdIdx].shape[1];
    if (last > T)
      fail("--generate " + std::to_string(count) + " --full: the prompt (" +
           std::to_string(promptLen) + ") and the generated tokens need " +
           std::to_string(last) + " positions; the forward pass has " +
           std::to_string(T));
    std::vector<int64_t> padded(batch * T, 0);
    for (long g = 0; g < count; ++g) {
      int64_t len = promptLen + g;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < len; ++t)
          padded[b * T + t] = seq[b][t];
      forward.bind(fwdIdx, padded.data());
      forward.run();
      std::vector<float> logits = forward.resultFloats(0);
      forward.freeResults();
      std::vector<int64_t> next =
          argmaxRows(logits, batch, T, len - 1, vocab, top);
      for (int64_t b = 0; b < batch; ++b)
        seq[b].push_back(next[b]);
    }
  } else {
    if (last > maxLen)
      fail("--generate " + std::to_string(count) + ": the prompt (" +
           std::to_string(promptLen) + ") and the generated tokens need " +
           std::to_string(last) + " positions; max_block_size is " +
           std::to_string(maxLen));
    decoder.call.bindWeights(weights);
    const Slot &logits = decoder.logits();
    std::vector<uint8_t> out(logits.numElements() *
                             dat::dtypeSize(logits.dtype));
    std::vector<int64_t> token(batch);
    for (int64_t t = 0; t < last; ++t) {
      for (int64_t b = 0; b < batch; ++b)
        token[b] = seq[b][t];
      decoder.step(token.data(), out.data(),
                   "token at position " + std::to_string(t));
      if (t >= promptLen - 1) {
        std::vector<float> values =
            dat::floatValues(logits.dtype, out.data(), logits.numElements());
        std::vector<int64_t> next = argmaxRows(values, batch, 1, 0, vocab, top);
        for (int64_t b = 0; b < batch; ++b)
          seq[b].push_back(next[b]);
      }
    }
  }

  std::printf("generated %ld tokens greedily (%s)\n", count,
              full ? "a full forward pass per token" : "KV cache");
  for (int64_t b = 0; b < batch; ++b) {
    std::printf("tokens[%lld]:", static_cast<long long>(b));
    for (int64_t t = promptLen; t < promptLen + count; ++t)
      std::printf(" %lld", static_cast<long long>(seq[b][t]));
    std::printf("\nlogits[%lld]:", static_cast<long long>(b));
    for (float v : top[b])
      std::printf(" %.6g", v);
    std::printf("\n");
  }
  return 0;
}

} // namespace datrt
