/* The C API of a program library (include/dat/Runtime/dat_program.h) from
 * plain C: forward on token ids, the decode step against it, and the
 * errors returned (not exits). Built against examples/tiny-dat-lm.json
 * (idx [1, 16] -> logits [1, 16, 97]). */
#include "dat/Runtime/dat_program.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { T = 16, V = 97 };

int main(void) {
  printf("api version %d\n", dat_program_api_version());
  printf("manifest starts %.9s\n", dat_program_manifest());
  if (dat_program_create("/nonexistent.weights", 0) == NULL)
    printf("bad weights: %s\n", dat_program_last_error());
  dat_program *p = dat_program_create(NULL, 0);
  if (!p) {
    printf("create failed: %s\n", dat_program_last_error());
    return 1;
  }
  printf("has step %d\n", dat_program_has_step(p));

  static int64_t idx[T];
  static float logits[T * V], step[V];
  for (int t = 0; t < T; ++t)
    idx[t] = (7 * t + 3) % V;
  const void *in[] = {idx};
  void *out[] = {logits};
  if (dat_program_run(p, in, out) != 0) {
    printf("run failed: %s\n", dat_program_last_error());
    return 1;
  }
  /* The step with the KV cache gives the forward pass's logits. */
  double worst = 0;
  for (int t = 0; t < T; ++t) {
    if (dat_program_step(p, &idx[t], step) != 0) {
      printf("step failed: %s\n", dat_program_last_error());
      return 1;
    }
    for (int v = 0; v < V; ++v)
      worst = fmax(worst, fabs(step[v] - logits[t * V + v]));
  }
  printf("steps %lld, step vs forward max abs difference below 1e-4: %s\n",
         (long long)dat_program_position(p), worst < 1e-4 ? "yes" : "no");
  dat_program_reset(p);
  printf("after reset position %lld\n", (long long)dat_program_position(p));

  idx[3] = V;
  if (dat_program_run(p, in, out) != 0)
    printf("bad token: %s\n", dat_program_last_error());
  if (dat_program_step(p, &idx[3], step) != 0)
    printf("bad step token: %s\n", dat_program_last_error());
  if (dat_program_run(p, NULL, out) != 0)
    printf("no inputs: %s\n", dat_program_last_error());
  /* A program of fixed shapes has no dynamic dimensions to size. */
  printf("no dims: %d\n", dat_program_set_dims(p, 0, NULL, NULL));
  const char *names[] = {"seq"};
  const int64_t sizes[] = {4};
  if (dat_program_set_dims(p, 1, names, sizes) != 0)
    printf("bad dims: %s\n", dat_program_last_error());
  dat_program_destroy(p);
  return 0;
}
