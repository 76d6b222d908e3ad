/* The CUDA export's test driver (tests/gpu/test_cuda_export.cpp): runs policy_cuda_forward over N
   observations read from a file, from host memory, and writes the outputs; checks on the way that
   the same observations from device memory, and the first one alone, give the same outputs bit
   for bit (one captured graph serves every count and kind of pointer).
   usage: cuda_driver N OBSERVATIONS OUT_DIR   (writes OUT_DIR/logits.f32 and OUT_DIR/value.f32)
   Exit status 77: no CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "policy_cuda.h"

static int write_floats(const char* dir, const char* name, const float* values, long count) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.f32", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f) return 0;
  const size_t written = fwrite(values, sizeof(float), (size_t)count, f);
  return fclose(f) == 0 && written == (size_t)count;
}

#define CHECK(call)                                                                     \
  do {                                                                                  \
    const cudaError_t status = (call);                                                  \
    if (status != cudaSuccess) {                                                        \
      fprintf(stderr, "cuda_driver: %s: %s\n", #call, cudaGetErrorString(status));      \
      return 3;                                                                         \
    }                                                                                   \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: cuda_driver N OBSERVATIONS OUT_DIR\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no CUDA device\n");
    return 77;
  }
  const long n = atol(argv[1]);
  if (n < 1 || n > POLICY_CUDA_BATCH) {
    fprintf(stderr, "cuda_driver: N must be 1 to %d\n", POLICY_CUDA_BATCH);
    return 2;
  }
  const size_t obsCount = (size_t)(n * POLICY_CUDA_OBS_SIZE), logitsCount = (size_t)(n * POLICY_CUDA_LOGITS_SIZE),
               valueCount = (size_t)(n * POLICY_CUDA_VALUE_SIZE);
  float* obs = (float*)malloc(sizeof(float) * obsCount);
  float* logits = (float*)malloc(sizeof(float) * logitsCount);
  float* value = (float*)malloc(sizeof(float) * valueCount);
  float* again = (float*)malloc(sizeof(float) * (logitsCount + valueCount));
  FILE* f = fopen(argv[2], "rb");
  if (!obs || !logits || !value || !again || !f || fread(obs, sizeof(float), obsCount, f) != obsCount) {
    fprintf(stderr, "cuda_driver: cannot read %ld observations from %s\n", n, argv[2]);
    return 2;
  }
  fclose(f);

  policy_cuda* policy = NULL;
  CHECK(policy_cuda_create(&policy));
  CHECK(policy_cuda_forward(policy, obs, logits, value, (int)n, 0));

  /* Device pointers, on a stream of the caller's. */
  float *dObs, *dLogits, *dValue;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMalloc((void**)&dObs, sizeof(float) * obsCount));
  CHECK(cudaMalloc((void**)&dLogits, sizeof(float) * logitsCount));
  CHECK(cudaMalloc((void**)&dValue, sizeof(float) * valueCount));
  CHECK(cudaMemcpy(dObs, obs, sizeof(float) * obsCount, cudaMemcpyHostToDevice));
  CHECK(policy_cuda_forward(policy, dObs, dLogits, dValue, (int)n, stream));
  CHECK(cudaMemcpy(again, dLogits, sizeof(float) * logitsCount, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(again + logitsCount, dValue, sizeof(float) * valueCount, cudaMemcpyDeviceToHost));
  if (memcmp(again, logits, sizeof(float) * logitsCount) != 0 || memcmp(again + logitsCount, value, sizeof(float) * valueCount) != 0) {
    fprintf(stderr, "cuda_driver: device pointers give other outputs than host pointers\n");
    return 4;
  }
  /* One observation. */
  CHECK(policy_cuda_forward(policy, obs, again, again + POLICY_CUDA_LOGITS_SIZE, 1, 0));
  if (memcmp(again, logits, sizeof(float) * POLICY_CUDA_LOGITS_SIZE) != 0 || memcmp(again + POLICY_CUDA_LOGITS_SIZE, value, sizeof(float) * POLICY_CUDA_VALUE_SIZE) != 0) {
    fprintf(stderr, "cuda_driver: a call for one observation differs from the batch's first\n");
    return 4;
  }
  /* Refusals: a count out of range. */
  if (policy_cuda_forward(policy, obs, logits, value, 0, 0) != cudaErrorInvalidValue ||
      policy_cuda_forward(policy, obs, logits, value, POLICY_CUDA_BATCH + 1, 0) != cudaErrorInvalidValue) {
    fprintf(stderr, "cuda_driver: a count out of range was not refused\n");
    return 4;
  }
  if (!write_floats(argv[3], "logits", logits, (long)logitsCount) || !write_floats(argv[3], "value", value, (long)valueCount)) {
    fprintf(stderr, "cuda_driver: cannot write to %s\n", argv[3]);
    return 2;
  }
  policy_cuda_destroy(policy);
  cudaFree(dObs);
  cudaFree(dLogits);
  cudaFree(dValue);
  cudaStreamDestroy(stream);
  free(obs);
  free(logits);
  free(value);
  free(again);
  return 0;
}
