#include "core/ir/schedule.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

namespace cas::ir {

int directLanes(std::int64_t outputs, std::int64_t terms) { return outputs <= 16384 && terms >= 64 ? 32 : 1; }

int Schedule::launches() const {
  return int(std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.kind != StepKind::Fill && s.kind != StepKind::Copy; }));
}

namespace {

// Threads a reduction keeps in flight: enough to cover memory latency on every SM.
constexpr std::int64_t kReductionThreads = 1 << 16;
constexpr std::int64_t kRowReductionThreads = 1 << 18;

// Computed per element inside a fused kernel. BroadcastTo and Concat read their inputs from
// memory at mapped positions (they never join their producers' kernels).
bool isFusable(Op op) { return isElementwise(op) || op == Op::BroadcastTo || op == Op::Concat; }
bool readsMapped(Op op) { return op == Op::BroadcastTo || op == Op::Concat; }
bool isReduction(Op op) { return op == Op::ReduceSum || op == Op::ReduceMax; }
bool isConv(Op op) { return op == Op::Conv2d || op == Op::Conv2dGradInput || op == Op::Conv2dGradWeight; }

// A unit while fusion runs: Unit plus what merging needs.
struct Work {
  Unit unit;
  bool closed = false;      // takes no more members
  bool dead = false;        // merged into another unit
  std::int64_t split = 0;   // Gemm: 1 with an epilogue, > 1 split-K
  std::set<int> deps;       // units it reads from
};

bool isKernelUnit(UnitKind k) { return k == UnitKind::Elementwise || k == UnitKind::Reduction || k == UnitKind::Special; }

StepKind stepKindOf(UnitKind k) {
  switch (k) {
    case UnitKind::Elementwise:
    case UnitKind::Reduction:
    case UnitKind::Special: return StepKind::Kernel;
    case UnitKind::Gemm: return StepKind::Gemm;
    case UnitKind::ImplicitConv: return StepKind::ImplicitConv;
    case UnitKind::Blas: return StepKind::Blas;
    case UnitKind::Conv: return StepKind::Conv;
  }
  return StepKind::Kernel;
}

class Planner {
  struct PendingStep {
    StepKind kind;
    int level;
    std::vector<int> units;
  };

 public:
  Planner(const Graph& g, const ScheduleTarget& t) : g_(g), target_(t), unitOf_(g.nodes.size(), -1), root_(g.nodes.size()) {}

  Schedule run() {
    check();
    groupNodes();
    order();
    decideStorage();
    return finish();
  }

 private:
  const Node& node(NodeId id) const { return g_.node(id); }
  Unit& unit(int u) { return work_[size_t(u)].unit; }
  const Unit& unit(int u) const { return work_[size_t(u)].unit; }

  void check() const {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (numel(n.shape) > target_.maxElements)
        throw std::runtime_error("the CUDA backend indexes tensors with 32 bits; " + describeNode(g_, NodeId(i)) + " has " +
                                 std::to_string(numel(n.shape)) + " elements");
      if (target_.symmetricConvPadding && isConv(n.op) && (n.attrs.padTop != n.attrs.padBottom || n.attrs.padLeft != n.attrs.padRight))
        throw std::runtime_error("the CUDA backend needs symmetric padding for convolutions (cuDNN); " + describeNode(g_, NodeId(i)) +
                                 " pads " + std::to_string(n.attrs.padTop) + "," + std::to_string(n.attrs.padLeft) + "," +
                                 std::to_string(n.attrs.padBottom) + "," + std::to_string(n.attrs.padRight) +
                                 ": use an odd kernel with padding='same', or padding='valid'");
    }
  }

  // The cost model: a generated GEMM for the small fp32 products of RL networks (launch
  // latency dominates there, and an epilogue saves a kernel), the vendor library for the rest.
  // Returns the split-K factor: 0 for the library, 1 for a GEMM with an epilogue, > 1 for a
  // split-K GEMM that accumulates with atomics (no epilogue; weight gradients, K = the batch).
  std::int64_t gemmSplit(const Node& n) const {
    if (!target_.fuseGemmEpilogues || n.precision != Precision::F32) return 0;
    const Shape& a = node(n.inputs[0]).shape;
    const Shape& b = node(n.inputs[1]).shape;
    if (b.size() != 2 || (n.attrs.transposeA && a.size() != 2)) return 0;
    const std::int64_t k = n.attrs.transposeA ? a[0] : a.back();
    const std::int64_t m = numel(n.shape) / n.shape.back(), nn = n.shape.back();
    // Without vendor libraries a long K goes to direct.cuh, whose warps split it and add in a
    // fixed order, rather than to a split-K GEMM, whose atomic sums vary from run to run.
    if (!target_.vendorLibraries && (n.attrs.transposeA || k > target_.gemmMaxK)) return 0;
    if (target_.vendorLibraries && m * nn * k > target_.gemmMaxWork) return 0;
    if (!n.attrs.transposeA && k <= target_.gemmMaxK) return 1;
    return std::max<std::int64_t>(2, (k + target_.splitChunk - 1) / target_.splitChunk);
  }

  // An fp32 or tf32 forward convolution (x [N,C,H,W], w [K,C,R,S]) small enough for a block to
  // stage the filters and one image in shared memory, with a thread per 16 filters and 2 pixels
  // (1 where the output's rows have an odd width) at most 1024 (conv_forward_images.cuh; the
  // renderer's gpu::imageForward picks the same). The kernel pads each tap's filters to whole
  // groups of up to 16: K + 15 floats at most.
  bool imageForward(const Node& n) const {
    if (n.op != Op::Conv2d) return false;
    const Shape& x = node(n.inputs[0]).shape;
    const Shape& w = node(n.inputs[1]).shape;
    const std::int64_t bytes = 4 * (numel(x) / x[0] + numel(w) / w[0] * (w[0] + 15));
    const std::int64_t pixels = n.shape[2] * (n.shape[3] % 2 == 0 ? n.shape[3] / 2 : n.shape[3]), groups = (w[0] + 15) / 16;
    return bytes <= target_.imageConvMaxBytes && pixels * groups <= 1024;
  }

  // An fp32 or tf32 weight gradient (x [N,C,H,W], dy [N,K,HO,WO]) small enough for a block to
  // stage one image and its gradient in shared memory (conv_wgrad_images.cuh). The kernel pads
  // each pixel's K gradients to whole groups of up to 16, a multiple of 4 and 4 more: K + 22
  // floats at most.
  bool imageWeightGradient(const Node& n) const {
    if (n.op != Op::Conv2dGradWeight) return false;
    const Shape& x = node(n.inputs[0]).shape;
    const Shape& dy = node(n.inputs[1]).shape;
    const std::int64_t bytes = 4 * (numel(x) / x[0] + dy[2] * dy[3] * (dy[1] + 22));
    const std::int64_t taps = x[1] * n.shape[2] * n.shape[3], filters = n.shape[0];
    if (bytes > target_.imageConvMaxBytes || taps > 512) return false;
    // A thread per tap and group of filters, at most 1024 threads: at most 16 filters a thread
    // (the kernel keeps their sums in registers).
    const std::int64_t groups = 1024 / taps;
    return (filters + groups - 1) / groups <= 16;
  }

  int newUnit(UnitKind kind, NodeId id) {
    Work w;
    w.unit.kind = kind;
    w.unit.members = {id};
    w.unit.shape = node(id).shape;
    if (kind != UnitKind::Elementwise) w.unit.head = id;
    work_.push_back(std::move(w));
    return int(work_.size()) - 1;
  }

  // A softmax over a short axis can be computed per element (each recomputes its row's max and
  // sum), so it fuses with its consumers; it reads its input at other elements of the row.
  bool isRowwise(const Node& n) const {
    return (n.op == Op::Softmax || n.op == Op::LogSoftmax) && n.shape[size_t(n.attrs.axis)] <= 32;
  }

  // The unit that computes the value `in` stands for (through reshapes and slice views).
  int producerUnit(NodeId in) const {
    const NodeId r = root_[size_t(in)];
    return view_[size_t(r)] ? producerUnit(node(r).inputs[0]) : unitOf_[size_t(r)];
  }

  // Units whose results node `id` reads at elements other than its own: they must run in an
  // earlier launch, never in id's own kernel.
  std::set<int> indexedSources(NodeId id) const {
    std::set<int> out;
    const Node& n = node(id);
    for (NodeId in : n.inputs) {
      const NodeId r = root_[size_t(in)];
      if (isRowwise(n) || n.op == Op::Concat || view_[size_t(r)] || (node(in).op == Op::Reshape && !readsReshapeInPlace(id, in))) {
        const int v = producerUnit(in);
        if (v >= 0) out.insert(v);
      }
    }
    return out;
  }

  // Whether node `id` reads the reshape `in` at its own flat index: a reshape keeps row-major
  // order, so an elementwise node with as many elements reads element i where it writes
  // element i, and may share a kernel with the reshaped value's producer (`linear` puts a
  // reshape between its matmul and the bias, activation and residual after it).
  bool readsReshapeInPlace(NodeId id, NodeId in) const {
    const Node& n = node(id);
    return node(in).op == Op::Reshape && isElementwise(n.op) && !view_[size_t(root_[size_t(in)])] && numel(node(in).shape) == numel(n.shape);
  }

  // The units that node `id` reads from (through reshapes and views), other than `self`.
  std::set<int> sourcesOf(NodeId id, int self) const {
    std::set<int> out;
    for (NodeId in : node(id).inputs) {
      const int v = producerUnit(in);
      if (v >= 0 && v != self) out.insert(v);
    }
    return out;
  }

  // Whether unit `from` reads, directly or not, from unit `to`.
  bool reaches(int from, int to) const {
    std::vector<bool> seen(work_.size(), false);
    std::vector<int> stack = {from};
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      if (seen[size_t(u)]) continue;
      seen[size_t(u)] = true;
      for (int v : work_[size_t(u)].deps) stack.push_back(v);
    }
    return false;
  }

  // Node `id` may join unit `u` when no unit it reads from reads from u (that would be a cycle
  // between kernels: u would both feed and follow that unit).
  bool mayJoin(NodeId id, int u) const {
    for (int v : sourcesOf(id, u))
      if (reaches(v, u)) return false;
    return true;
  }

  void groupNodes() {
    std::vector<std::vector<NodeId>> users(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      for (NodeId in : g_.nodes[i].inputs) users[size_t(in)].push_back(NodeId(i));
    view_.assign(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const NodeId id = NodeId(i);
      const Node& n = g_.nodes[i];
      root_[i] = n.op == Op::Reshape ? root_[size_t(n.inputs[0])] : id;
      if (n.op == Op::Input || n.op == Op::Constant || n.op == Op::Reshape) continue;
      // A slice read only by fused code is a view: its readers load through the index mapping.
      if (n.op == Op::Slice && !isOutput(id) && !users[i].empty() &&
          std::all_of(users[i].begin(), users[i].end(), [&](NodeId r) {
            const Node& user = node(r);
            return isFusable(user.op) || isReduction(user.op) || isRowwise(user);
          })) {
        view_[i] = true;
        continue;
      }
      int u = -1;
      if (isFusable(n.op) || isReduction(n.op) || isRowwise(n)) {
        const std::set<int> indexed = indexedSources(id);
        std::vector<int> candidates;
        for (NodeId in : n.inputs) {
          const int v = unitOf_[size_t(root_[size_t(in)])];
          if (v < 0 || work_[size_t(v)].closed || !takesMembers(v) || readsMapped(n.op) || isRowwise(n)) continue;
          if ((node(in).op == Op::Reshape && !readsReshapeInPlace(id, in)) || indexed.count(v)) continue;  // read from memory
          const Shape& groupShape = unit(v).shape;
          if (isReduction(n.op)) {
            if (unit(v).kind != UnitKind::Elementwise || node(in).op == Op::Reshape || node(in).shape != groupShape) continue;
          } else if (numel(n.shape) != numel(groupShape)) {
            continue;  // members share the unit's flat index; their shapes may differ by a reshape
          }
          if (std::find(candidates.begin(), candidates.end(), v) == candidates.end()) candidates.push_back(v);
        }
        // Elementwise units this node joins together become one unit when that makes no cycle.
        if (!isReduction(n.op))
          for (size_t k = 1; k < candidates.size(); ++k)
            if (mergeUnits(candidates[0], candidates[k])) candidates[k] = candidates[0];
        for (int v : candidates)
          if (!indexed.count(v) && mayJoin(id, v)) {
            u = v;
            break;
          }
        if (u >= 0) {
          unit(u).members.push_back(id);
        } else {
          u = newUnit(UnitKind::Elementwise, id);
          if (isReduction(n.op)) unit(u).shape = node(n.inputs[0]).shape;
        }
        if (isReduction(n.op)) {
          work_[size_t(u)].closed = true;
          unit(u).kind = UnitKind::Reduction;
          unit(u).reduction = id;
        }
      } else if (n.op == Op::MatMul) {
        const std::int64_t split = gemmSplit(n);
        u = newUnit(split > 0 ? UnitKind::Gemm : target_.vendorLibraries ? UnitKind::Blas : UnitKind::Special, id);
        work_[size_t(u)].split = split;
        if (split != 1) work_[size_t(u)].closed = true;
      } else if (isConv(n.op)) {
        // bf16/fp16 forward and weight gradient: generated implicit GEMMs; a generated forward is
        // open, so the bias and activation after it become its epilogue. fp32 and tf32 go to
        // cuDNN, but for forwards and weight gradients over small images (imageConvMaxBytes).
        const bool implicit = isHalfWidth(n.precision) ? n.op != Op::Conv2dGradInput : imageForward(n) || imageWeightGradient(n);
        const UnitKind library = target_.vendorLibraries ? UnitKind::Conv : UnitKind::Special;
        u = newUnit(implicit ? UnitKind::ImplicitConv : library, id);
        work_[size_t(u)].closed = !implicit || n.op == Op::Conv2dGradWeight;
      } else {
        u = newUnit(UnitKind::Special, id);  // one node, its own index space
        work_[size_t(u)].closed = true;
      }
      unitOf_[i] = u;
      for (int v : sourcesOf(id, u)) work_[size_t(u)].deps.insert(v);
    }
  }

  // Merges unit `from` into `into` (both open elementwise units of one shape) unless a path
  // through a third unit connects them, which would make the merged kernel feed itself.
  bool mergeUnits(int into, int from) {
    if (into == from) return true;
    Work &a = work_[size_t(into)], &b = work_[size_t(from)];
    if (a.unit.kind != UnitKind::Elementwise || b.unit.kind != UnitKind::Elementwise || a.unit.shape != b.unit.shape) return false;
    for (NodeId m : a.unit.members)
      if (indexedSources(m).count(from)) return false;
    for (NodeId m : b.unit.members)
      if (indexedSources(m).count(into)) return false;
    for (int v : a.deps)
      if (v != from && reaches(v, from)) return false;
    for (int v : b.deps)
      if (v != into && reaches(v, into)) return false;
    for (NodeId m : b.unit.members) unitOf_[size_t(m)] = into;
    a.unit.members.insert(a.unit.members.end(), b.unit.members.begin(), b.unit.members.end());
    std::sort(a.unit.members.begin(), a.unit.members.end());
    for (int v : b.deps)
      if (v != into) a.deps.insert(v);
    a.deps.erase(from);
    b.unit.members.clear();
    b.deps.clear();
    b.dead = true;
    for (Work& w : work_)
      if (w.deps.erase(from) && &w != &a) w.deps.insert(into);
    return true;
  }

  // Elementwise units and epilogues take members; special and library units do not.
  bool takesMembers(int u) const {
    const UnitKind k = unit(u).kind;
    return k == UnitKind::Gemm || k == UnitKind::ImplicitConv || k == UnitKind::Elementwise || k == UnitKind::Reduction;
  }

  // Topological order of units and their as-late-as-possible levels.
  void order() {
    const size_t count = work_.size();
    std::vector<std::vector<int>> users(count);
    std::vector<int> pending(count, 0);
    for (size_t u = 0; u < count; ++u)
      for (int d : work_[u].deps) {
        if (work_[u].dead) break;
        users[size_t(d)].push_back(int(u));
        ++pending[u];
      }
    std::vector<int> ready, topo;
    size_t live = 0;
    for (size_t u = 0; u < count; ++u) {
      if (work_[u].dead) continue;
      ++live;
      if (pending[u] == 0) ready.push_back(int(u));
    }
    while (!ready.empty()) {
      std::sort(ready.begin(), ready.end(), std::greater<>());
      const int u = ready.back();
      ready.pop_back();
      topo.push_back(u);
      for (int v : users[size_t(u)])
        if (--pending[size_t(v)] == 0) ready.push_back(v);
    }
    if (topo.size() != live) throw std::logic_error("fusion produced a cycle between kernels");
    std::vector<int> height(count, 0);
    for (size_t k = topo.size(); k-- > 0;) {
      const int u = topo[k];
      for (int v : users[size_t(u)]) height[size_t(u)] = std::max(height[size_t(u)], height[size_t(v)] + 1);
    }
    int top = 0;
    for (int h : height) top = std::max(top, h);
    for (size_t u = 0; u < count; ++u) work_[u].unit.level = top - height[u];
    order_ = topo;
    // Within a level units are independent: put the kernels side by side so they can merge.
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      const Unit &ua = unit(a), &ub = unit(b);
      if (ua.level != ub.level) return ua.level < ub.level;
      auto rank = [](UnitKind k) { return isKernelUnit(k) ? 0 : k == UnitKind::Gemm ? 1 : 2; };
      return rank(ua.kind) < rank(ub.kind);
    });
  }

  bool isOutput(NodeId id) const {
    for (const Output& o : g_.outputs)
      if (root_[size_t(o.node)] == id) return true;
    return false;
  }

  // A GEMM unit computed by the Narrow or Skinny variant (it takes a launch of its own).
  bool isSkinny(int u) const {
    const Node& mm = node(unit(u).head);
    return work_[size_t(u)].split == 1 && (numel(mm.shape) / mm.shape.back() <= target_.skinnyRows || mm.shape.back() <= target_.narrowColumns);
  }

  // Whether a node outside node i's unit reads its value, directly or through reshapes (a
  // reshape that is a graph output reads it from memory too).
  bool readOutsideItsUnit(NodeId i, const std::vector<std::vector<NodeId>>& users) const {
    std::vector<NodeId> readers = users[size_t(i)];
    while (!readers.empty()) {
      const NodeId r = readers.back();
      readers.pop_back();
      if (node(r).op != Op::Reshape) {
        if (unitOf_[size_t(r)] != unitOf_[size_t(i)]) return true;
        continue;
      }
      if (isOutput(r)) return true;
      readers.insert(readers.end(), users[size_t(r)].begin(), users[size_t(r)].end());
    }
    return false;
  }

  void decideStorage() {
    const size_t count = g_.nodes.size();
    std::vector<std::vector<NodeId>> users(count);
    for (size_t i = 0; i < count; ++i)
      for (NodeId in : g_.nodes[i].inputs) users[size_t(in)].push_back(NodeId(i));
    stored_.assign(count, false);
    for (size_t i = 0; i < count; ++i) {
      const Node& n = g_.nodes[i];
      if (n.op == Op::Reshape || view_[i]) continue;
      if (n.op == Op::Input || n.op == Op::Constant || unitOf_[i] < 0) {
        stored_[i] = true;
        continue;
      }
      const Unit& u = unit(unitOf_[i]);
      bool store = isOutput(NodeId(i)) || NodeId(i) == u.reduction || u.kind == UnitKind::Blas || u.kind == UnitKind::Conv ||
                   u.kind == UnitKind::Special;
      stored_[i] = store || readOutsideItsUnit(NodeId(i), users);
    }
    // Merge the ordered units into steps (horizontal fusion of same-level elementwise units).
    std::vector<int> stepOfUnit(work_.size(), -1);
    for (size_t k = 0; k < order_.size(); ++k) {
      const int u = order_[k];
      const Unit& un = unit(u);
      // Same-level kernels share a launch; tiled GEMMs too, and kernels of their level ride
      // along in the GEMMs' launch (with the GEMMs' block size).
      const bool tiled = un.kind == UnitKind::Gemm && !isSkinny(u);
      const bool mergeable = target_.horizontalFusion && (isKernelUnit(un.kind) || tiled) && !ownsLaunch(u);
      PendingStep* last = steps_.empty() ? nullptr : &steps_.back();
      const bool lastTiled = last && last->kind == StepKind::Gemm &&
                             std::all_of(last->units.begin(), last->units.end(), [&](int v) { return unit(v).kind != UnitKind::Gemm || !isSkinny(v); });
      if (mergeable && last && last->level == un.level && int(last->units.size()) < target_.maxUnitsPerStep &&
          (last->kind == StepKind::Kernel || lastTiled) && std::none_of(last->units.begin(), last->units.end(), [&](int v) { return ownsLaunch(v); })) {
        if (tiled) last->kind = StepKind::Gemm;
        last->units.push_back(u);
      } else {
        steps_.push_back({stepKindOf(un.kind), un.level, {u}});
      }
      stepOfUnit[size_t(u)] = int(steps_.size()) - 1;
    }
    // Storage: reshapes alias their root; in-place updates alias their input.
    storage_.assign(count, kNoNode);
    for (size_t i = 0; i < count; ++i)
      if (stored_[size_t(root_[i])]) storage_[i] = root_[i];
    for (const Update& up : g_.updates) {
      const NodeId outNode = g_.output(up.output), in = g_.findInput(up.input);
      if (outNode == kNoNode || in == kNoNode) throw std::invalid_argument("update " + up.output + " -> " + up.input + " names a missing output or input");
      const NodeId out = root_[size_t(outNode)];
      if (inPlace(out, in, users, stepOfUnit)) {
        storage_[size_t(out)] = in;
        for (size_t i = 0; i < count; ++i)
          if (root_[i] == out) storage_[i] = in;
        aliased_.insert(in);
      } else {
        copies_.push_back({out, in});
      }
    }
  }

  // The output may overwrite the input when an elementwise unit computes it (same shape), and
  // every other reader of the input runs in an earlier step or in the same unit at the same index.
  bool inPlace(NodeId out, NodeId in, const std::vector<std::vector<NodeId>>& users, const std::vector<int>& stepOfUnit) const {
    const int u = unitOf_[size_t(out)];
    if (u < 0 || (unit(u).kind != UnitKind::Elementwise && unit(u).kind != UnitKind::Reduction)) return false;
    if (unit(u).reduction == out || node(out).shape != node(in).shape || aliased_.count(in) || isOutput(in)) return false;
    const int step = stepOfUnit[size_t(u)];
    std::vector<NodeId> readers = users[size_t(in)];
    for (size_t k = 0; k < readers.size(); ++k) {
      const NodeId r = readers[k];
      if (node(r).op == Op::Reshape) {
        for (NodeId rr : users[size_t(r)]) readers.push_back(rr);
        if (isOutput(r)) return false;
        continue;
      }
      if (view_[size_t(r)]) return false;
      const int ru = unitOf_[size_t(r)];
      if (ru == u) {
        if (node(r).op == Op::BroadcastTo || node(r).shape != node(in).shape) return false;
        continue;
      }
      if (ru < 0 || stepOfUnit[size_t(ru)] >= step) return false;
    }
    return true;
  }

  // --- the schedule as data ------------------------------------------------------------

  void planReduction(Unit& u) {
    const Node& r = node(u.reduction);
    const Shape& xs = node(r.inputs[0]).shape;
    ReductionPlan& p = u.reduce;
    p.outputs = numel(r.shape);
    p.length = numel(xs) / std::max<std::int64_t>(p.outputs, 1);
    std::vector<bool> reduced(xs.size(), false);
    for (std::int64_t ax : r.attrs.ints) reduced[size_t(ax)] = true;
    // Which index neighbouring threads step through must follow memory: when the innermost
    // (non-unit) axis is reduced (a bias gradient over N, H, W), a warp walks one output's row
    // and sums across lanes; otherwise (over the batch of a dense layer) lanes take
    // neighbouring outputs.
    std::int64_t innermost = std::int64_t(xs.size()) - 1;
    while (innermost > 0 && xs[size_t(innermost)] == 1) --innermost;
    if (innermost >= 0 && reduced[size_t(innermost)] && p.length >= 64) {
      p.layout = ReductionLayout::Rows;
      p.chunks = std::min<std::int64_t>((p.length + 7) / 8, std::max<std::int64_t>(32, kRowReductionThreads / p.outputs));
      p.chunks = (p.chunks + 31) / 32 * 32;  // a multiple of a warp: a warp serves one output
      p.atomic = true;
    } else {
      p.layout = ReductionLayout::Columns;
      p.chunks = p.length <= 8 ? 1 : std::min<std::int64_t>((p.length + 7) / 8, std::max<std::int64_t>(1, kReductionThreads / p.outputs));
      p.atomic = p.chunks > 1;
    }
    u.threads = p.outputs * p.chunks;
    if (p.atomic) fills_.push_back({u.reduction, r.op == Op::ReduceMax ? -1.0f / 0.0f : 0.0f});
  }

  // The products each output of a direct product or convolution sums.
  std::int64_t directTerms(const Node& n) const {
    const Shape& a = node(n.inputs[0]).shape;
    if (n.op == Op::MatMul) return n.attrs.transposeA ? a[a.size() - 2] : a.back();
    const Shape& w = node(n.inputs[1]).shape;
    return w[1] * w[2] * w[3];
  }

  // Attention kernels keep a launch of their own: the shared tiles of two would add up past
  // what a block may hold, and their blocks of one head want the block size picked for them.
  bool ownsLaunch(int u) const { return unit(u).kind == UnitKind::Special && isAttention(node(unit(u).head).op); }

  // Rows of `length` (queries or keys) over every sequence and head of an attention node, each
  // head's rows padded to a multiple of kAttentionRowGroup (attention.cuh).
  std::int64_t attentionRows(const Node& n, std::int64_t length) const {
    const Node& q = node(n.inputs[0]);
    if (q.shape[2] / n.attrs.heads > kMaxAttentionHeadWidth)
      throw std::runtime_error("the CUDA backend runs attention heads of at most " + std::to_string(kMaxAttentionHeadWidth) + " values; " +
                               describeNode(g_, NodeId(&n - g_.nodes.data())) + " has " + std::to_string(q.shape[2] / n.attrs.heads));
    return q.shape[0] * n.attrs.heads * (length + kAttentionRowGroup - 1) / kAttentionRowGroup * kAttentionRowGroup;
  }

  void planSpecial(Unit& u) {
    const Node& n = node(u.head);
    u.threads = numel(n.shape);
    switch (n.op) {
      case Op::Softmax:
      case Op::LogSoftmax: u.threads /= n.shape[size_t(n.attrs.axis)]; break;  // a thread per row
      case Op::MaxPool2dGrad: u.threads = numel(node(n.inputs[1]).shape); fills_.push_back({u.head, 0.0f}); break;
      case Op::AvgPool2dGrad: u.threads = numel(node(n.inputs[0]).shape); fills_.push_back({u.head, 0.0f}); break;
      case Op::ScatterAddRows: u.threads = numel(node(n.inputs[1]).shape); fills_.push_back({u.head, 0.0f}); break;
      case Op::Transpose:
      case Op::Slice:
      case Op::MaxPool2d:
      case Op::AvgPool2d:
      case Op::Gather: break;
      case Op::Attention:  // a warp per query row of a head (attention.cuh), or per 16 on tensor cores (attention_mma.cuh)
      case Op::AttentionStats:
      case Op::AttentionGradQ:
      case Op::AttentionGradKV:
      {  // rows: queries, or keys for [dk | dv]; a warp per row, or per 16 rows on tensor cores
        const std::int64_t rows = node(n.inputs[n.op == Op::AttentionGradKV ? 1 : 0]).shape[1];
        const std::int64_t heads = node(n.inputs[0]).shape[0] * n.attrs.heads;
        u.threads = attentionOnTensorCores(g_, n) ? heads * ((rows + kTensorCoreAttentionRows - 1) / kTensorCoreAttentionRows) * 32
                                                  : attentionRows(n, rows) * 32;
        break;
      }
      case Op::LayerNorm:  // a warp per row (layer_norm.cuh)
      case Op::LayerNormGrad: u.threads = numel(n.shape) / n.shape.back() * 32; break;
      case Op::MatMul:  // without vendor libraries: direct.cuh
      case Op::Conv2d: u.threads *= directLanes(numel(n.shape), directTerms(n)); break;
      default:
        throw std::runtime_error("the CUDA backend cannot run " + describeNode(g_, u.head) +
                                 (target_.vendorLibraries ? " yet" : " without cuBLAS and cuDNN (only forward passes are planned without them)"));
    }
  }

  void planGemm(int index) {
    Unit& u = unit(index);
    const Node& mm = node(u.head);
    const Shape& as = node(mm.inputs[0]).shape;
    GemmPlan& p = u.gemm;
    p.transposeA = mm.attrs.transposeA;
    p.transposeB = mm.attrs.transposeB;
    p.k = p.transposeA ? as[0] : as.back();
    p.n = mm.shape.back();
    p.m = numel(mm.shape) / p.n;
    p.split = work_[size_t(index)].split;
    if (p.split > 1) {
      p.variant = GemmVariant::SplitK;
      fills_.push_back({u.head, 0.0f});
    } else {
      p.variant = p.m <= target_.skinnyRows ? GemmVariant::Skinny : p.n <= target_.narrowColumns ? GemmVariant::Narrow : GemmVariant::Tiled;
    }
  }

  std::string kernelName(int stepIndex, const std::vector<NodeId>& nodes) const {
    std::string name = "k" + std::to_string(stepIndex);
    int shown = 0;
    for (NodeId m : nodes) {
      if (shown == 3) {
        name += "_etc";
        break;
      }
      name += "_" + std::string(opName(node(m).op));
      ++shown;
    }
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return name;
  }

  std::string labelOf(const std::vector<NodeId>& nodes) const {
    std::vector<std::string> labels;
    for (NodeId m : nodes) {
      const std::string& l = node(m).label;
      if (!l.empty() && std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
    }
    std::string text;
    for (size_t k = 0; k < labels.size() && k < 4; ++k) text += (k ? ", " : "") + labels[k];
    if (labels.size() > 4) text += ", ...";
    return text;
  }

  Schedule finish() {
    Schedule s;
    std::vector<int> renumber(work_.size(), -1);
    std::vector<Step> main;
    for (const PendingStep& ps : steps_) {
      Step step;
      step.kind = ps.kind;
      step.level = ps.level;
      std::vector<NodeId> all;
      for (int u : ps.units) {
        Unit& un = unit(u);
        switch (un.kind) {
          case UnitKind::Elementwise: un.threads = numel(un.shape); break;
          case UnitKind::Reduction: planReduction(un); break;
          case UnitKind::Special: planSpecial(un); break;
          case UnitKind::Gemm: planGemm(u); break;
          case UnitKind::ImplicitConv:
            if (node(un.head).op == Op::Conv2dGradWeight) fills_.push_back({un.head, 0.0f});
            break;
          case UnitKind::Blas:
          case UnitKind::Conv: break;
        }
        renumber[size_t(u)] = int(s.units.size());
        step.units.push_back(int(s.units.size()));
        s.units.push_back(un);
        all.insert(all.end(), un.members.begin(), un.members.end());
      }
      if (ps.units.size() == 1 && !isKernelUnit(unit(ps.units[0]).kind)) step.node = unit(ps.units[0]).head;
      step.name = isGenerated(ps.kind) ? kernelName(int(main.size()), all) : std::string(opName(node(step.node).op));
      step.label = labelOf(all);
      main.push_back(std::move(step));
    }
    for (const auto& [id, value] : fills_) {
      Step fill;
      fill.kind = StepKind::Fill;
      fill.node = id;
      fill.fill = value;
      fill.name = "fill";
      s.steps.push_back(fill);
    }
    for (Step& st : main) s.steps.push_back(std::move(st));
    for (const auto& [out, in] : copies_) {
      Step copy;
      copy.kind = StepKind::Copy;
      copy.node = out;
      copy.target = in;
      copy.name = "copy";
      s.steps.push_back(copy);
    }
    s.unitOf.assign(g_.nodes.size(), -1);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (unitOf_[i] >= 0) s.unitOf[i] = renumber[size_t(unitOf_[i])];
      if (unitOf_[i] >= 0 && !stored_[i]) ++s.fusedNodes;
    }
    s.storage = std::move(storage_);
    s.stored = std::move(stored_);
    s.root = std::move(root_);
    s.view = std::move(view_);
    return s;
  }

  const Graph& g_;
  ScheduleTarget target_;
  std::vector<int> unitOf_;
  std::vector<NodeId> root_;
  std::vector<Work> work_;
  std::vector<int> order_;
  std::vector<bool> stored_;
  std::vector<bool> view_;  // slices read through their index mapping, never stored
  std::vector<NodeId> storage_;
  std::vector<PendingStep> steps_;
  std::set<NodeId> aliased_;
  std::vector<std::pair<NodeId, NodeId>> copies_;
  std::vector<std::pair<NodeId, float>> fills_;
};

}  // namespace

bool attentionOnTensorCores(const Graph& g, const Node& n) {
  if (!isAttention(n.op) || !isHalfWidth(n.precision)) return false;
  const std::int64_t width = g.node(n.inputs[0]).shape[2] / n.attrs.heads;
  return width % 16 == 0 && width <= kMaxTensorCoreHeadWidth;
}

Schedule planSchedule(const Graph& g, const ScheduleTarget& target) { return Planner(g, target).run(); }

}  // namespace cas::ir
