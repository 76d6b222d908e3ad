// `cuda-agent bench update`: times one policy update (forward, loss, backward, global-norm clip,
// Adam) and one forward pass for the TARGETS.md networks, on the chosen backend.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <new>
#include <random>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/train/benchmark_nets.hpp"
#include "core/train/update.hpp"

namespace cas::cli {
namespace {

std::vector<float> randomNormal(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Mean microseconds per call: warm-up, then enough calls to fill about `seconds`, then `wait`
// (which lets an asynchronous backend finish what the calls queued: the figure is throughput,
// as TARGETS.md measures PyTorch).
template <typename F, typename W>
std::pair<double, int> timeCalls(F&& call, W&& wait, double seconds, int minCalls) {
  for (int i = 0; i < 10; ++i) call();
  wait();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) call();
  wait();
  const double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 10;
  const int calls = std::max(minCalls, int(seconds / std::max(once, 1e-7)));
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call();
  wait();
  const double total = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return {total / calls, calls};
}

std::string knownNets() {
  std::string known;
  for (const train::BenchmarkNet& n : train::benchmarkNets()) known += (known.empty() ? "" : ", ") + n.name;
  return known;
}

// A batch of observations: normal values, or token ids for the Transformers.
std::vector<float> observations(const train::BenchmarkNet& net, std::int64_t batch, std::mt19937& rng) {
  std::int64_t count = batch;
  for (std::int64_t d : net.observationShape) count *= d;
  std::vector<float> obs = randomNormal(size_t(count), rng);
  if (net.tokenVocabulary > 0)
    for (float& x : obs) x = float(std::uniform_int_distribution<std::int64_t>(0, net.tokenVocabulary - 1)(rng));
  return obs;
}

}  // namespace

// The update and the forward pass of o.net, timed and printed; throws what the backend throws.
static int timeUpdate(const BenchOptions& o) {
  const train::BenchmarkNet* net = train::findBenchmarkNet(o.net);
  if (!net) {
    std::cerr << "bench: unknown network '" << o.net << "'; known: " << knownNets() << "\n";
    return 2;
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(o.device, &error);
  if (!backend) {
    std::cerr << "bench: " << error << "\n";
    return 1;
  }
  if (o.precision != "fp32" && backend->id() == "cpu") {
    std::cerr << "bench: the CPU backend computes in fp32 only; --precision " << o.precision << " needs the CUDA backend\n";
    return 1;
  }
  pdl::CompileOptions co;
  co.fileName = net->name + ".pdl";
  co.observationShape = net->observationShape;
  co.actionCount = net->actionCount;
  co.batch = o.batch;
  pdl::CompileResult compiled = pdl::compile(o.precision == "bf16" ? net->mixedSource : net->source, co);
  if (!compiled.policy) {
    std::cerr << "bench: " << formatHeadline(compiled.diagnostics.items().at(0)) << "\n";
    return 1;
  }
  std::mt19937 rng(1);
  train::Updater updater(*backend, *compiled.policy, train::LossKind::PolicyGradient, train::OptimizerConfig{}, net->actionCount, 1);
  exec::Executable& exe = updater.executable();
  auto obs = observations(*net, o.batch, rng);
  std::vector<float> actions(size_t(o.batch));
  for (size_t i = 0; i < actions.size(); ++i) actions[i] = float(i % size_t(net->actionCount));
  auto advantages = randomNormal(size_t(o.batch), rng), returns = randomNormal(size_t(o.batch), rng);
  exe.setInput("obs", obs.data(), obs.size());
  exe.setInput("actions", actions.data(), actions.size());
  exe.setInput("advantages", advantages.data(), advantages.size());
  exe.setInput("returns", returns.data(), returns.size());
  auto finishUpdates = [&] { exe.finish(); };
  auto [syncUs, syncCalls] = timeCalls([&] { updater.step(); }, [] {}, o.seconds / 4, 5);
  const std::string allocationsBefore = exec::statValue(exe.runtimeStats(), "pool device allocations");
  auto [updateUs, updateCalls] = timeCalls([&] { updater.enqueueStep(); }, finishUpdates, o.seconds, 5);
  const std::string allocationsAfter = exec::statValue(exe.runtimeStats(), "pool device allocations");

  ir::Graph forward = compiled.policy->graph;
  ir::runPasses(forward, ir::defaultPipeline());
  auto fwd = backend->compile(forward);
  for (const ir::Node& n : fwd->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
      auto v = exec::initialValues(n, 1);
      fwd->setInput(n.attrs.name, v.data(), v.size());
    }
  fwd->setInput("obs", obs.data(), obs.size());
  auto [forwardUs, forwardCalls] = timeCalls([&] { fwd->run(); }, [&] { fwd->finish(); }, o.seconds, 5);

  std::string threads;
  for (const auto& [k, v] : backend->properties())
    if (k == "threads") threads = v;
  if (o.json) {
    std::printf("{\"net\": \"%s\", \"batch\": %lld, \"device\": \"%s\", \"precision\": \"%s\", \"threads\": %s, "
                "\"parameters\": %lld, \"update_us\": %.2f, \"update_calls\": %d, \"update_sync_us\": %.2f, "
                "\"forward_us\": %.2f, \"forward_calls\": %d",
                net->name.c_str(), static_cast<long long>(o.batch), backend->id().c_str(), o.precision.c_str(),
                threads.empty() ? "null" : threads.c_str(), static_cast<long long>(compiled.policy->parameterCount), updateUs,
                updateCalls, syncUs, forwardUs, forwardCalls);
    if (!allocationsBefore.empty())
      std::printf(", \"device_allocations_during_timing\": %lld", std::stoll(allocationsAfter) - std::stoll(allocationsBefore));
    for (const exec::RuntimeStat& s : exe.runtimeStats()) std::printf(", %s: %s", jsonString(s.name).c_str(), jsonString(s.value()).c_str());
    std::printf("}\n");
  } else {
    std::printf("%s, batch %lld, %s%s, %s: update %.1f us (%d calls; %.1f us waiting for each loss), forward %.1f us (%d calls)\n",
                net->name.c_str(), static_cast<long long>(o.batch), backend->statusText().c_str(),
                threads.empty() ? "" : (" (" + threads + " threads)").c_str(), o.precision.c_str(), updateUs, updateCalls, syncUs,
                forwardUs, forwardCalls);
    for (const exec::RuntimeStat& s : exe.runtimeStats()) std::printf("  %s: %s\n", s.name.c_str(), s.value().c_str());
    if (!allocationsBefore.empty())
      std::printf("  device allocations while timing: %lld\n", std::stoll(allocationsAfter) - std::stoll(allocationsBefore));
  }
  return 0;
}

// The bench, ending with a sentence whatever it throws (out of memory: the options that size it).
int runBenchUpdate(const BenchOptions& o) {
  try {
    return timeUpdate(o);
  } catch (const std::bad_alloc&) {
    std::cerr << "bench: out of memory for " << o.net << " at --batch " << o.batch << " (its activations, gradients and optimizer state); "
              << "give a smaller --batch\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cas::cli
