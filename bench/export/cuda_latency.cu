/* bench/export/latency_cuda.py's timer for a policy exported as CUDA (at --batch 1): batch-1
   policy_cuda_forward on the observations of a file, cycling through them, from pinned host memory
   to pinned host memory (the copies are part of each call, as they are for onnxruntime's session
   with host inputs and outputs), timed with CLOCK_MONOTONIC in rounds; prints the median and the
   minimum round's microseconds per call, the same with device-resident observations and outputs,
   and the outputs of the first observation (for the comparison with onnxruntime).
   usage: cuda_latency N OBSERVATIONS ROUNDS CALLS_PER_ROUND */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime.h>

#include "policy_cuda.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

#define CHECK(call)                                                                 \
  do {                                                                              \
    const cudaError_t status = (call);                                              \
    if (status != cudaSuccess) {                                                    \
      fprintf(stderr, "cuda_latency: %s: %s\n", #call, cudaGetErrorString(status)); \
      return 3;                                                                     \
    }                                                                               \
  } while (0)

/* Median and minimum microseconds per call over `rounds` rounds of `calls` calls. */
static int time_calls(policy_cuda* policy, const float* obs, long n, float* logits, float* value, long rounds, long calls, cudaStream_t s,
                      double* median, double* minimum) {
  double* per_call = (double*)malloc(sizeof(double) * (size_t)rounds);
  if (!per_call) return 2;
  for (long c = 0; c < calls; ++c) CHECK(policy_cuda_forward(policy, obs + (c % n) * POLICY_CUDA_OBS_SIZE, logits, value, 1, s));
  for (long r = 0; r < rounds; ++r) {
    const double start = now_us();
    for (long c = 0; c < calls; ++c) CHECK(policy_cuda_forward(policy, obs + (c % n) * POLICY_CUDA_OBS_SIZE, logits, value, 1, s));
    per_call[r] = (now_us() - start) / (double)calls;
  }
  qsort(per_call, (size_t)rounds, sizeof(double), by_value);
  *median = per_call[rounds / 2];
  *minimum = per_call[0];
  free(per_call);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: cuda_latency N OBSERVATIONS ROUNDS CALLS_PER_ROUND\n");
    return 2;
  }
  const long n = atol(argv[1]), rounds = atol(argv[3]), calls = atol(argv[4]);
  const size_t obsBytes = sizeof(float) * (size_t)(n * POLICY_CUDA_OBS_SIZE);
  float *obs, *logits, *value, *dObs, *dLogits, *dValue;
  cudaStream_t s;
  CHECK(cudaMallocHost((void**)&obs, obsBytes));
  CHECK(cudaMallocHost((void**)&logits, sizeof(float) * POLICY_CUDA_LOGITS_SIZE));
  CHECK(cudaMallocHost((void**)&value, sizeof(float) * POLICY_CUDA_VALUE_SIZE));
  FILE* f = fopen(argv[2], "rb");
  if (n < 1 || rounds < 1 || calls < 1 || !f || fread(obs, 1, obsBytes, f) != obsBytes) {
    fprintf(stderr, "cuda_latency: cannot read %ld observations from %s\n", n, argv[2]);
    return 2;
  }
  fclose(f);
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  policy_cuda* policy = NULL;
  CHECK(policy_cuda_create(&policy));
  double hostMedian, hostMin, deviceMedian, deviceMin;
  int status = time_calls(policy, obs, n, logits, value, rounds, calls, s, &hostMedian, &hostMin);
  if (status) return status;
  CHECK(cudaMalloc((void**)&dObs, obsBytes));
  CHECK(cudaMalloc((void**)&dLogits, sizeof(float) * POLICY_CUDA_LOGITS_SIZE));
  CHECK(cudaMalloc((void**)&dValue, sizeof(float) * POLICY_CUDA_VALUE_SIZE));
  CHECK(cudaMemcpy(dObs, obs, obsBytes, cudaMemcpyHostToDevice));
  status = time_calls(policy, dObs, n, dLogits, dValue, rounds, calls, s, &deviceMedian, &deviceMin);
  if (status) return status;
  CHECK(policy_cuda_forward(policy, obs, logits, value, 1, s));
  printf("{\"median_us\": %.4f, \"min_us\": %.4f, \"device_median_us\": %.4f, \"device_min_us\": %.4f, \"logits\": [", hostMedian, hostMin,
         deviceMedian, deviceMin);
  for (int i = 0; i < POLICY_CUDA_LOGITS_SIZE; ++i) printf("%s%.9g", i ? ", " : "", logits[i]);
  printf("], \"value\": %.9g}\n", value[0]);
  policy_cuda_destroy(policy);
  return 0;
}
