#pragma once
// Graph passes, run as a named list. Each pass is verified after it runs. Fusion is not a pass:
// the schedule (schedule.hpp) decides kernels, their order and storage in one place.
//   fold         evaluate elementwise and reshape nodes whose inputs are all constants
//   dce          drop nodes that no output needs (inputs are kept: they are the interface)
//   plan-memory  assign every computed node a storage slot, reusing slots whose values are dead;
//                reshapes share their input's slot
#include <functional>
#include <string>
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::ir {

struct PassInfo {
  std::string name;
  std::string summary;
  std::function<void(Graph&)> run;
};

const std::vector<PassInfo>& allPasses();
const std::vector<std::string>& defaultPipeline();  // fold, dce, plan-memory

// Runs the named passes in order; throws std::runtime_error naming the pass when one is unknown
// or leaves the graph ill-formed.
void runPasses(Graph& g, const std::vector<std::string>& names);

void foldConstants(Graph& g);
void eliminateDeadCode(Graph& g);
void planMemory(Graph& g);

}  // namespace cas::ir
