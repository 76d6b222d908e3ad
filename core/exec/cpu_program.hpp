#pragma once
// The CPU reference backend's executable: interprets an IR graph node by node with the kernels in
// cpu_program.cpp, on a thread pool, in the storage slots chosen by the plan-memory pass.
// Thread-safety: one thread at a time drives a CpuProgram.
#include <memory>

#include "core/exec/backend.hpp"
#include "core/exec/thread_pool.hpp"

namespace cas::exec {

std::unique_ptr<Executable> compileForCpu(const ir::Graph& graph, std::shared_ptr<ThreadPool> pool);

}  // namespace cas::exec
