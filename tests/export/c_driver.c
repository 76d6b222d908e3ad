/* test_export's driver for a policy exported as C (tests/core/test_export.cpp): runs
   policy_forward_batch over N observations read from a file and writes its outputs, after
   checking that policy_forward and policy_forward_with give the batch's results bit for bit.
   usage: c_driver N OBSERVATIONS OUT_DIR   (writes OUT_DIR/logits.f32 and OUT_DIR/value.f32) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static int write_floats(const char* dir, const char* name, const float* values, long count) {
  char path[4096];
  FILE* f;
  size_t written;
  snprintf(path, sizeof path, "%s/%s.f32", dir, name);
  f = fopen(path, "wb");
  if (!f) return 0;
  written = fwrite(values, sizeof(float), (size_t)count, f);
  return fclose(f) == 0 && written == (size_t)count;
}

int main(int argc, char** argv) {
  static float workspace[POLICY_WORKSPACE_FLOATS];
  float one_logits[POLICY_LOGITS_SIZE], one_value[POLICY_VALUE_SIZE];
  long n;
  float *obs, *logits, *value;
  FILE* f;
  if (argc != 4) {
    fprintf(stderr, "usage: c_driver N OBSERVATIONS OUT_DIR\n");
    return 2;
  }
  n = atol(argv[1]);
  obs = malloc(sizeof(float) * (size_t)(n * POLICY_OBS_SIZE));
  logits = malloc(sizeof(float) * (size_t)(n * POLICY_LOGITS_SIZE));
  value = malloc(sizeof(float) * (size_t)(n * POLICY_VALUE_SIZE));
  f = fopen(argv[2], "rb");
  if (n < 1 || !obs || !logits || !value || !f || fread(obs, sizeof(float), (size_t)(n * POLICY_OBS_SIZE), f) != (size_t)(n * POLICY_OBS_SIZE)) {
    fprintf(stderr, "c_driver: cannot read %ld observations from %s\n", n, argv[2]);
    return 2;
  }
  fclose(f);
  if (policy_forward_batch(obs, logits, value, n) != 0) {
    fprintf(stderr, "c_driver: policy_forward_batch refused the observations\n");
    return 3;
  }
  if (policy_forward(obs + (n - 1) * POLICY_OBS_SIZE, one_logits, one_value) != 0 ||
      memcmp(one_logits, logits + (n - 1) * POLICY_LOGITS_SIZE, sizeof one_logits) != 0 ||
      memcmp(one_value, value + (n - 1) * POLICY_VALUE_SIZE, sizeof one_value) != 0) {
    fprintf(stderr, "c_driver: policy_forward differs from policy_forward_batch on the last sample\n");
    return 4;
  }
  if (policy_forward_with(workspace, obs, one_logits, one_value) != 0 || memcmp(one_logits, logits, sizeof one_logits) != 0 ||
      memcmp(one_value, value, sizeof one_value) != 0) {
    fprintf(stderr, "c_driver: policy_forward_with differs from policy_forward_batch on the first sample\n");
    return 4;
  }
  if (!write_floats(argv[3], "logits", logits, n * POLICY_LOGITS_SIZE) || !write_floats(argv[3], "value", value, n * POLICY_VALUE_SIZE)) {
    fprintf(stderr, "c_driver: cannot write to %s\n", argv[3]);
    return 2;
  }
  free(obs);
  free(logits);
  free(value);
  return 0;
}
