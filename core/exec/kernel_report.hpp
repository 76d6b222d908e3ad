#pragma once
// One kernel or library call, as `cuda-agent kernels`, `cuda-agent bench search` and the studio's
// kernel view show it: the kernels of a compiled graph (Executable::profileKernels) and those of
// a device search (search::SelfPlaySearch::profileKernels). Fields a backend cannot measure stay
// negative (or empty) and print as "n/a".
// Thread-safety: a plain value.
#include <string>
#include <vector>

namespace cas::exec {

// One block of a kernel launch on the SM timeline: which SM ran it, and when, in microseconds
// from the first block's start (%globaltimer, which ticks in steps of about a microsecond).
struct BlockSpan {
  int sm = 0;
  double startUs = 0, endUs = 0;
};

struct KernelReport {
  std::string name;     // "k7_Tanh_Add", "cublas_MatMul", "search_select_masked"
  std::string kind;     // "generated", "cuBLAS", "cuDNN", "fill", "copy", "search"
  std::string label;    // the PDL layers it computes, or the search phase
  std::string source;   // CUDA source (generated kernels) or the file it comes from
  std::string launch;   // "grid 64 x block 256"
  int nodes = 0;        // IR nodes it computes
  double timeUs = -1;   // mean time per run (CUDA events)
  int registers = -1, sharedBytes = -1;
  double theoreticalOccupancy = -1;  // active warps / maximum warps per SM, 0..1
  double achievedOccupancy = -1;     // measured (CUPTI); -1 when not measured
  // Instrumented kernels only: the mean share of a warp's 32 lanes active at each sampled
  // step (__activemask), 0..1; and the last launch's blocks on the SM timeline.
  double simtEfficiency = -1;
  std::vector<BlockSpan> timeline;
};

}  // namespace cas::exec
