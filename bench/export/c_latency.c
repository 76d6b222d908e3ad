/* bench/export/latency.py's timer for a policy exported as C: batch-1 policy_forward on the
   observations of a file, cycling through them, timed with CLOCK_MONOTONIC in rounds; prints
   the median and the minimum round's microseconds per call, and the outputs of the first
   observation (for the comparison with onnxruntime).
   usage: c_latency N OBSERVATIONS ROUNDS CALLS_PER_ROUND */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "policy.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  long n, rounds, calls, r, c, i;
  float *obs, logits[POLICY_LOGITS_SIZE], value[POLICY_VALUE_SIZE];
  double* per_call;
  volatile float sink = 0.0f;
  FILE* f;
  if (argc != 5) {
    fprintf(stderr, "usage: c_latency N OBSERVATIONS ROUNDS CALLS_PER_ROUND\n");
    return 2;
  }
  n = atol(argv[1]);
  rounds = atol(argv[3]);
  calls = atol(argv[4]);
  obs = malloc(sizeof(float) * (size_t)(n * POLICY_OBS_SIZE));
  per_call = malloc(sizeof(double) * (size_t)(rounds > 0 ? rounds : 1));
  f = fopen(argv[2], "rb");
  if (n < 1 || rounds < 1 || calls < 1 || !obs || !per_call || !f ||
      fread(obs, sizeof(float), (size_t)(n * POLICY_OBS_SIZE), f) != (size_t)(n * POLICY_OBS_SIZE)) {
    fprintf(stderr, "c_latency: cannot read %ld observations from %s\n", n, argv[2]);
    return 2;
  }
  fclose(f);
  for (c = 0; c < calls; ++c) policy_forward(obs + (c % n) * POLICY_OBS_SIZE, logits, value); /* warm-up */
  for (r = 0; r < rounds; ++r) {
    const double start = now_us();
    for (c = 0; c < calls; ++c) {
      policy_forward(obs + (c % n) * POLICY_OBS_SIZE, logits, value);
      sink += value[0];
    }
    per_call[r] = (now_us() - start) / (double)calls;
  }
  qsort(per_call, (size_t)rounds, sizeof(double), by_value);
  policy_forward(obs, logits, value);
  printf("{\"median_us\": %.4f, \"min_us\": %.4f, \"logits\": [", per_call[rounds / 2], per_call[0]);
  for (i = 0; i < POLICY_LOGITS_SIZE; ++i) printf("%s%.9g", i ? ", " : "", logits[i]);
  printf("], \"value\": %.9g}\n", value[0]);
  free(obs);
  free(per_call);
  return sink == 12345.0f; /* keeps the calls from being optimised away */
}
