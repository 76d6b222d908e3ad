#include "gpu/codegen.hpp"

#include "gpu/implicit_conv.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cas::gpu {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Op;
using ir::Shape;
using ir::kNoNode;
using ir::numel;

constexpr std::int64_t kMaxElements = (1ll << 31) - 1;
constexpr std::int64_t kSkinnyRows = 8;            // up to this many rows: one warp per 32 columns
constexpr std::int64_t kNarrowColumns = 16;        // up to this many columns: one warp per row
constexpr std::int64_t kGemmMaxK = 1024;           // with an epilogue: at most 16 K steps
constexpr std::int64_t kSplitChunk = 128;          // split-K: K rows per block
constexpr std::int64_t kGemmMaxWork = 1ll << 28;   // M*N*K above which cuBLAS wins
constexpr std::int64_t kReductionThreads = 1 << 16;
constexpr std::int64_t kRowReductionThreads = 1 << 18;

// Computed per element inside a fused kernel. BroadcastTo and Concat read their inputs from
// memory at mapped positions (they never join their producers' kernels).
bool isFusable(Op op) { return ir::isElementwise(op) || op == Op::BroadcastTo || op == Op::Concat; }
bool readsMapped(Op op) { return op == Op::BroadcastTo || op == Op::Concat; }
bool isReduction(Op op) { return op == Op::ReduceSum || op == Op::ReduceMax; }
bool isConv(Op op) { return op == Op::Conv2d || op == Op::Conv2dGradInput || op == Op::Conv2dGradWeight; }

std::string where(const Node& n, NodeId id) {
  std::string s = "%" + std::to_string(id) + " " + std::string(ir::opName(n.op));
  if (!n.label.empty()) s += " in " + n.label;
  if (n.line > 0) s += " (line " + std::to_string(n.line) + ":" + std::to_string(n.column) + ")";
  return s;
}

std::string floatLiteral(float v) {
  if (v != v) return "__int_as_float(0x7fc00000)";
  if (v == 1.0f / 0.0f) return "__int_as_float(0x7f800000)";
  if (v == -1.0f / 0.0f) return "__int_as_float(0xff800000)";
  char text[64];
  std::snprintf(text, sizeof text, "%.9gf", double(v));
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

std::vector<std::int64_t> stridesOf(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// The index into a tensor of shape `from` (numpy-broadcast to `to`) for flat index `i` of `to`.
std::string broadcastIndex(const Shape& from, const Shape& to, const std::string& i) {
  const std::int64_t fromCount = numel(from), toCount = numel(to);
  if (fromCount == toCount) return i;
  if (fromCount == 1) return "0";
  const size_t rank = to.size(), offset = rank - from.size();
  Shape padded(offset, 1);
  padded.insert(padded.end(), from.begin(), from.end());
  // A trailing block (a bias row): i % fromCount. A leading block: i / (toCount / fromCount).
  size_t firstKept = 0;
  while (firstKept < rank && padded[firstKept] == 1) ++firstKept;
  bool trailing = true;
  for (size_t d = firstKept; d < rank; ++d) trailing = trailing && padded[d] == to[d];
  if (trailing) return "(" + i + " % " + std::to_string(fromCount) + ")";
  size_t lastKept = rank;
  while (lastKept > 0 && padded[lastKept - 1] == 1) --lastKept;
  bool leading = true;
  for (size_t d = 0; d < lastKept; ++d) leading = leading && padded[d] == to[d];
  if (leading) return "(" + i + " / " + std::to_string(toCount / fromCount) + ")";
  const auto toStride = stridesOf(to), fromStride = stridesOf(padded);
  std::string expr;
  for (size_t d = 0; d < rank; ++d) {
    if (padded[d] == 1) continue;
    if (!expr.empty()) expr += " + ";
    expr += "((" + i + " / " + std::to_string(toStride[d]) + ") % " + std::to_string(to[d]) + ") * " + std::to_string(fromStride[d]);
  }
  return "(" + expr + ")";
}

std::string unaryExpr(Op op, const std::string& a) {
  switch (op) {
    case Op::Neg: return "(-" + a + ")";
    case Op::Relu: return "(" + a + " > 0.f ? " + a + " : 0.f)";
    case Op::Tanh: return "cas_tanh(" + a + ")";
    case Op::Sigmoid: return "(1.f / (1.f + expf(-" + a + ")))";
    case Op::Gelu: return "cas_gelu(" + a + ")";
    case Op::Exp: return "expf(" + a + ")";
    case Op::Log: return "logf(" + a + ")";
    case Op::Sqrt: return "sqrtf(" + a + ")";
    default: throw std::logic_error("not a unary op");
  }
}

std::string binaryExpr(Op op, const std::string& a, const std::string& b) {
  auto cmp = [&](const char* o) { return "(" + a + " " + o + " " + b + " ? 1.f : 0.f)"; };
  switch (op) {
    case Op::Add: return "(" + a + " + " + b + ")";
    case Op::Sub: return "(" + a + " - " + b + ")";
    case Op::Mul: return "(" + a + " * " + b + ")";
    case Op::Div: return "(" + a + " / " + b + ")";
    case Op::Maximum: return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    case Op::Minimum: return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
    case Op::GeluGrad: return "(" + b + " * cas_gelu_derivative(" + a + "))";
    case Op::Greater: return cmp(">");
    case Op::GreaterEqual: return cmp(">=");
    case Op::Less: return cmp("<");
    case Op::LessEqual: return cmp("<=");
    case Op::Equal: return cmp("==");
    case Op::NotEqual: return cmp("!=");
    default: throw std::logic_error("not a binary op");
  }
}

std::int64_t envInt(const char* name, std::int64_t fallback) {
  const char* env = std::getenv(name);
  return env && *env ? std::max<std::int64_t>(1, std::atoll(env)) : fallback;
}

// The blocks per SM the tiled GEMMs ask the compiler to fit (it caps registers to allow them).
std::int64_t tileBlocksPerSm() { return envInt("CAS_GEMM_BLOCKS_PER_SM", 1); }

// A tiled GEMM's shape: BM x BN outputs per block in K steps of BK, TM x TN outputs per thread.
struct GemmTile {
  int bm, bn, bk, tm, tn;
};

// The tile of every tiled GEMM. CAS_GEMM_TILE="BM,BN,BK,TM,TN" overrides it (for tuning by hand).
GemmTile gemmTile() {
  if (const char* env = std::getenv("CAS_GEMM_TILE"); env && *env) {
    GemmTile t{};
    if (std::sscanf(env, "%d,%d,%d,%d,%d", &t.bm, &t.bn, &t.bk, &t.tm, &t.tn) == 5 && t.tm > 0 && t.tn > 0 && t.bm % t.tm == 0 &&
        t.bn % t.tn == 0 && t.bm % 4 == 0 && t.bn % 4 == 0 && (t.bm * t.bk) % ((t.bm / t.tm) * (t.bn / t.tn)) == 0 &&
        (t.bn * t.bk) % ((t.bm / t.tm) * (t.bn / t.tn)) == 0)
      return t;
  }
  // Measured on the H200 for the MLPs' products (1024 x 256 x 256 and smaller): larger tiles
  // leave SMs idle, so every tiled GEMM uses 32 x 32 in K steps of 16, 4 x 2 outputs a thread
  // (a 16- and an 8-byte shared load per 8 FMAs); merged launches share the block size.
  return {32, 32, 16, 4, 2};
}

// The shared-memory tiles of a tiled GEMM, stored K-major. Rows are padded by 4 floats: 16-byte
// aligned for vector loads, and column stores of the untransposed operand spread over 8 banks.
std::string sharedTiles(const GemmTile& t) {
  return "  __shared__ __align__(16) float As[" + std::to_string(t.bk) + "][" + std::to_string(t.bm + 4) + "];\n" +
         "  __shared__ __align__(16) float Bs[" + std::to_string(t.bk) + "][" + std::to_string(t.bn + 4) + "];\n";
}

// A thread's `count` consecutive values of one shared-tile row into `array`, in 16- or 8-byte loads
// where the count allows (one vector load feeds count FMAs per value of the other operand).
std::string fragmentLoads(const std::string& array, const std::string& row, const std::string& first, int count) {
  const int width = count % 4 == 0 ? 4 : count % 2 == 0 ? 2 : 1;
  std::ostringstream s;
  for (int v = 0; v < count; v += width) {
    const std::string at = "&" + row + "[" + first + " + " + std::to_string(v) + "]";
    if (width == 4) {
      s << "      { const float4 q = *reinterpret_cast<const float4*>(" << at << "); " << array << "[" << v << "] = q.x; " << array << "[" << v + 1
        << "] = q.y; " << array << "[" << v + 2 << "] = q.z; " << array << "[" << v + 3 << "] = q.w; }\n";
    } else if (width == 2) {
      s << "      { const float2 q = *reinterpret_cast<const float2*>(" << at << "); " << array << "[" << v << "] = q.x; " << array << "[" << v + 1
        << "] = q.y; }\n";
    } else {
      s << "      " << array << "[" << v << "] = " << row << "[" << first << " + " << v << "];\n";
    }
  }
  return s.str();
}

// A unit of work before horizontal merging: a fusion group or one library/special node.
struct Unit {
  StepKind kind = StepKind::Kernel;
  std::vector<NodeId> members;
  NodeId head = kNoNode;       // Gemm: the matmul; Blas/Conv: the node
  NodeId reduction = kNoNode;  // the closing reduction of a Kernel group
  Shape shape;                 // the group's element shape
  bool closed = false;
  bool dead = false;           // merged into another unit
  std::int64_t split = 0;      // Gemm: split-K factor (1: not split, with an epilogue)
  std::set<int> deps;          // units it reads from
  int level = 0;
};

class Planner {
  struct PendingStep {
    StepKind kind;
    int level;
    std::vector<int> units;
  };

 public:
  Planner(const Graph& g, const ScheduleOptions& o) : g_(g), options_(o), unitOf_(g.nodes.size(), -1), root_(g.nodes.size()) {}

  Schedule run() {
    check();
    groupNodes();
    order();
    decideStorage();
    emit();
    return std::move(schedule_);
  }

 private:
  const Node& node(NodeId id) const { return g_.node(id); }

  void check() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (numel(n.shape) > kMaxElements)
        throw std::runtime_error("the CUDA backend indexes tensors with 32 bits; " + where(n, NodeId(i)) + " has " +
                                 std::to_string(numel(n.shape)) + " elements");
      if (isConv(n.op) && (n.attrs.padTop != n.attrs.padBottom || n.attrs.padLeft != n.attrs.padRight))
        throw std::runtime_error("the CUDA backend needs symmetric padding for convolutions (cuDNN); " + where(n, NodeId(i)) +
                                 " pads " + std::to_string(n.attrs.padTop) + "," + std::to_string(n.attrs.padLeft) + "," +
                                 std::to_string(n.attrs.padBottom) + "," + std::to_string(n.attrs.padRight) +
                                 ": use an odd kernel with padding='same', or padding='valid'");
    }
  }

  // The cost model: a generated GEMM for the small fp32 products of RL networks (launch
  // latency dominates there, and an epilogue saves a kernel), cuBLAS for the rest. Returns the
  // split-K factor: 0 for cuBLAS, 1 for a GEMM with an epilogue, >1 for a split-K GEMM that
  // accumulates with atomics (no epilogue; weight gradients, where K is the batch).
  std::int64_t gemmSplit(const Node& n) const {
    if (!options_.fuseGemmEpilogues || n.precision != ir::Precision::F32) return 0;
    const Shape& a = node(n.inputs[0]).shape;
    const Shape& b = node(n.inputs[1]).shape;
    if (b.size() != 2 || (n.attrs.transposeA && a.size() != 2)) return 0;
    const std::int64_t k = n.attrs.transposeA ? a[0] : a.back();
    const std::int64_t m = numel(n.shape) / n.shape.back(), nn = n.shape.back();
    if (m * nn * k > kGemmMaxWork) return 0;
    if (!n.attrs.transposeA && k <= kGemmMaxK) return 1;
    const std::int64_t chunk = envInt("CAS_GEMM_SPLIT_CHUNK", kSplitChunk);
    return std::max<std::int64_t>(2, (k + chunk - 1) / chunk);
  }

  int newUnit(StepKind kind, NodeId id) {
    Unit u;
    u.kind = kind;
    u.members = {id};
    u.shape = node(id).shape;
    if (kind != StepKind::Kernel) u.head = id;
    units_.push_back(u);
    return int(units_.size()) - 1;
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
      if (isRowwise(n) || n.op == Op::Concat || view_[size_t(r)] || node(in).op == Op::Reshape) {
        const int v = producerUnit(in);
        if (v >= 0) out.insert(v);
      }
    }
    return out;
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
    std::vector<bool> seen(units_.size(), false);
    std::vector<int> stack = {from};
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      if (seen[size_t(u)]) continue;
      seen[size_t(u)] = true;
      for (int v : units_[size_t(u)].deps) stack.push_back(v);
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
      int unit = -1;
      if (isFusable(n.op) || isReduction(n.op) || isRowwise(n)) {
        const std::set<int> indexed = indexedSources(id);
        std::vector<int> candidates;
        for (NodeId in : n.inputs) {
          const int u = unitOf_[size_t(root_[size_t(in)])];
          if (u < 0 || units_[size_t(u)].closed || !isSegmentMember(u) || readsMapped(n.op) || isRowwise(n)) continue;
          if (node(in).op == Op::Reshape || indexed.count(u)) continue;  // read from memory
          const Shape& groupShape = units_[size_t(u)].shape;
          if (isReduction(n.op)) {
            if (units_[size_t(u)].kind != StepKind::Kernel || node(in).shape != groupShape) continue;
          } else if (n.shape != groupShape) {
            continue;
          }
          if (std::find(candidates.begin(), candidates.end(), u) == candidates.end()) candidates.push_back(u);
        }
        // Elementwise groups this node joins together become one group when that makes no cycle.
        if (!isReduction(n.op))
          for (size_t k = 1; k < candidates.size(); ++k)
            if (mergeUnits(candidates[0], candidates[k])) candidates[k] = candidates[0];
        for (int u : candidates)
          if (!indexed.count(u) && mayJoin(id, u)) {
            unit = u;
            break;
          }
        if (unit >= 0) {
          units_[size_t(unit)].members.push_back(id);
        } else {
          unit = newUnit(StepKind::Kernel, id);
          if (isReduction(n.op)) units_[size_t(unit)].shape = node(n.inputs[0]).shape;
        }
        if (isReduction(n.op)) {
          units_[size_t(unit)].closed = true;
          units_[size_t(unit)].reduction = id;
        }
      } else if (n.op == Op::MatMul) {
        const std::int64_t split = gemmSplit(n);
        unit = newUnit(split > 0 ? StepKind::Gemm : StepKind::Blas, id);
        units_[size_t(unit)].split = split;
        if (split != 1) units_[size_t(unit)].closed = true;
      } else if (isConv(n.op)) {
        // bf16/fp16 forward and weight gradient: generated implicit GEMMs; the forward one is
        // open, so the bias and activation after it become its epilogue.
        const bool implicit = n.precision != ir::Precision::F32 && n.op != Op::Conv2dGradInput;
        unit = newUnit(implicit ? StepKind::ImplicitConv : StepKind::Conv, id);
        units_[size_t(unit)].closed = !implicit || n.op == Op::Conv2dGradWeight;
      } else {
        unit = newUnit(StepKind::Kernel, id);  // a special kernel: one node, its own index space
        units_[size_t(unit)].closed = true;
        units_[size_t(unit)].head = id;
      }
      unitOf_[i] = unit;
      for (int v : sourcesOf(id, unit)) units_[size_t(unit)].deps.insert(v);
    }
  }

  // Merges unit `from` into `into` (both open elementwise groups of one shape) unless a path
  // through a third unit connects them, which would make the merged kernel feed itself.
  bool mergeUnits(int into, int from) {
    if (into == from) return true;
    Unit &a = units_[size_t(into)], &b = units_[size_t(from)];
    if (a.kind != StepKind::Kernel || b.kind != StepKind::Kernel || a.shape != b.shape) return false;
    for (NodeId m : a.members)
      if (indexedSources(m).count(from)) return false;
    for (NodeId m : b.members)
      if (indexedSources(m).count(into)) return false;
    for (int v : a.deps)
      if (v != from && reaches(v, from)) return false;
    for (int v : b.deps)
      if (v != into && reaches(v, into)) return false;
    for (NodeId m : b.members) unitOf_[size_t(m)] = into;
    a.members.insert(a.members.end(), b.members.begin(), b.members.end());
    std::sort(a.members.begin(), a.members.end());
    for (int v : b.deps)
      if (v != into) a.deps.insert(v);
    a.deps.erase(from);
    b.members.clear();
    b.deps.clear();
    b.dead = true;
    for (Unit& u : units_)
      if (u.deps.erase(from) && &u != &a) u.deps.insert(into);
    return true;
  }

  // Elementwise groups and epilogues only: special kernels (head set, Kernel kind) take no members.
  bool isSegmentMember(int u) const {
    const Unit& unit = units_[size_t(u)];
    return unit.kind == StepKind::Gemm || unit.kind == StepKind::ImplicitConv || (unit.kind == StepKind::Kernel && unit.head == kNoNode);
  }

  // Topological order of units and their as-late-as-possible levels.
  void order() {
    const size_t count = units_.size();
    std::vector<std::vector<int>> users(count);
    std::vector<int> pending(count, 0);
    for (size_t u = 0; u < count; ++u)
      for (int d : units_[u].deps) {
        if (units_[u].dead) break;
        users[size_t(d)].push_back(int(u));
        ++pending[u];
      }
    std::vector<int> ready, topo;
    size_t live = 0;
    for (size_t u = 0; u < count; ++u) {
      if (units_[u].dead) continue;
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
    for (size_t u = 0; u < count; ++u) units_[u].level = top - height[u];
    order_ = topo;
    // Within a level units are independent: put the kernels side by side so they can merge.
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      const Unit &ua = units_[size_t(a)], &ub = units_[size_t(b)];
      if (ua.level != ub.level) return ua.level < ub.level;
      auto rank = [](StepKind k) { return k == StepKind::Kernel ? 0 : k == StepKind::Gemm ? 1 : 2; };
      return rank(ua.kind) < rank(ub.kind);
    });
  }

  bool isOutput(NodeId id) const {
    for (const ir::Output& o : g_.outputs)
      if (root_[size_t(o.node)] == id) return true;
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
      const Unit& u = units_[size_t(unitOf_[i])];
      bool store = isOutput(NodeId(i)) || NodeId(i) == u.reduction || u.kind == StepKind::Blas || u.kind == StepKind::Conv ||
                   (u.kind == StepKind::Kernel && u.head != kNoNode);
      for (NodeId user : users[i])
        if (unitOf_[size_t(user)] != unitOf_[i]) store = true;
      stored_[i] = store;
    }
    // Merge the ordered units into steps (horizontal fusion of same-level elementwise groups).
    std::vector<int> stepOfUnit(units_.size(), -1);
    for (size_t k = 0; k < order_.size(); ++k) {
      const int u = order_[k];
      const Unit& unit = units_[size_t(u)];
      // Same-level elementwise kernels share a launch; tiled GEMMs too, and kernels of their
      // level ride along in the GEMMs' launch (with the GEMMs' block size).
      const bool tiled = unit.kind == StepKind::Gemm && !isSkinny(u);
      const bool mergeable = options_.horizontalFusion && (unit.kind == StepKind::Kernel || tiled);
      PendingStep* last = steps_.empty() ? nullptr : &steps_.back();
      const bool lastTiled = last && last->kind == StepKind::Gemm &&
                             std::all_of(last->units.begin(), last->units.end(), [&](int v) { return units_[size_t(v)].kind != StepKind::Gemm || !isSkinny(v); });
      if (mergeable && last && last->level == unit.level && last->units.size() < 32 &&
          (last->kind == StepKind::Kernel || lastTiled)) {
        if (tiled) last->kind = StepKind::Gemm;
        last->units.push_back(u);
      } else {
        steps_.push_back({unit.kind, unit.level, {u}});
      }
      stepOfUnit[size_t(u)] = int(steps_.size()) - 1;
    }
    // Storage: reshapes alias their root; in-place updates alias their input.
    schedule_.storage.assign(count, kNoNode);
    for (size_t i = 0; i < count; ++i)
      if (stored_[root_[i]]) schedule_.storage[i] = root_[i];
    for (const ir::Update& up : g_.updates) {
      const NodeId outNode = g_.output(up.output), in = g_.findInput(up.input);
      if (outNode == kNoNode || in == kNoNode) throw std::invalid_argument("update " + up.output + " -> " + up.input + " names a missing output or input");
      const NodeId out = root_[size_t(outNode)];
      if (inPlace(out, in, users, stepOfUnit)) {
        schedule_.storage[size_t(out)] = in;
        for (size_t i = 0; i < count; ++i)
          if (root_[i] == out) schedule_.storage[i] = in;
        aliased_.insert(in);
      } else {
        copies_.push_back({out, in});
      }
    }
  }

  // The output may overwrite the input when an elementwise group computes it (same shape), and
  // every other reader of the input runs in an earlier step or in the same group at the same index.
  bool inPlace(NodeId out, NodeId in, const std::vector<std::vector<NodeId>>& users, const std::vector<int>& stepOfUnit) const {
    const int u = unitOf_[size_t(out)];
    if (u < 0 || units_[size_t(u)].kind != StepKind::Kernel || units_[size_t(u)].head != kNoNode) return false;
    if (units_[size_t(u)].reduction == out || node(out).shape != node(in).shape || aliased_.count(in) || isOutput(in)) return false;
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

  // --- source generation ---------------------------------------------------------------

  struct Params {
    std::vector<NodeId> buffers;  // storage nodes, in parameter order
    std::map<NodeId, int> index;
    std::string name(NodeId storageNode) {
      auto [it, added] = index.emplace(storageNode, int(buffers.size()));
      if (added) buffers.push_back(storageNode);
      return "p" + std::to_string(it->second);
    }
  };

  NodeId storageOf(NodeId id) const { return schedule_.storage[size_t(id)]; }

  // The value of `in` for member computations, as an expression: a member's local variable, or a
  // load from memory at the broadcast index of flat index `i` in `shape`.
  std::string operand(NodeId in, int unit, const Shape& shape, const std::string& i, Params& p) {
    if (unit >= 0 && unitOf_[size_t(in)] == unit && node(in).op != Op::Reshape) return "v" + std::to_string(in);
    const Node& src = node(in);
    if (view_[size_t(root_[size_t(in)])]) {
      const Node& slice = node(root_[size_t(in)]);
      const Shape& xs = node(slice.inputs[0]).shape;
      std::int64_t inner = 1;
      for (size_t d = size_t(slice.attrs.axis) + 1; d < xs.size(); ++d) inner *= xs[d];
      const std::string at = "(" + broadcastIndex(src.shape, shape, i) + ")";
      const std::int64_t rowIn = xs[size_t(slice.attrs.axis)] * inner, rowOut = slice.attrs.length * inner;
      const std::string mapped = "((" + at + " / " + std::to_string(rowOut) + ") * " + std::to_string(rowIn) + " + " +
                                 std::to_string(slice.attrs.start * inner) + " + " + at + " % " + std::to_string(rowOut) + ")";
      const NodeId source = slice.inputs[0];
      if (unitOf_[size_t(source)] == unit && node(source).op != Op::Reshape) throw std::logic_error("a view reads its own kernel's member");
      return operand(source, -1, xs, mapped, p);
    }
    if (src.op == Op::Constant && src.attrs.values.size() == 1) return floatLiteral(src.attrs.values[0]);
    return p.name(storageOf(in)) + "[" + broadcastIndex(src.shape, shape, i) + "]";
  }

  // Computes members (skipping `skip`) at flat index i of `shape`, storing those that are stored.
  void emitMembers(std::ostringstream& s, const Unit& unit, int u, const Shape& shape, const std::string& i, Params& p,
                   NodeId skip, const std::string& indent) {
    for (NodeId m : unit.members) {
      if (m == skip || m == unit.head) continue;
      const Node& n = node(m);
      std::string expr;
      auto arg = [&](size_t k) { return operand(n.inputs[k], u, shape, i, p); };
      const ir::OpKind kind = ir::opInfo(n.op).kind;
      if (n.op == Op::BroadcastTo) {
        expr = arg(0);
      } else if (n.op == Op::Concat) {
        const auto axis = size_t(n.attrs.axis);
        std::int64_t inner = 1;
        for (size_t d = axis + 1; d < n.shape.size(); ++d) inner *= n.shape[d];
        const std::string rowOut = std::to_string(n.shape[axis] * inner);
        const std::string o = "((" + i + ") / " + rowOut + ")", c = "((" + i + ") % " + rowOut + ")";
        std::int64_t offset = 0;
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          const Shape& part = node(n.inputs[k]).shape;
          const std::int64_t rowIn = part[axis] * inner;
          const std::string at = o + " * " + std::to_string(rowIn) + " + " + c + " - " + std::to_string(offset);
          const std::string load = operand(n.inputs[k], -1, part, at, p);
          expr += k + 1 < n.inputs.size() ? "(" + c + " < " + std::to_string(offset + rowIn) + " ? " + load + " : " : load;
          offset += rowIn;
        }
        expr += std::string(n.inputs.size() - 1, ')');
      } else if (isRowwise(n)) {
        const auto axis = size_t(n.attrs.axis);
        std::int64_t inner = 1;
        for (size_t d = axis + 1; d < n.shape.size(); ++d) inner *= n.shape[d];
        const std::int64_t len = n.shape[axis];
        const std::string id = std::to_string(m), row = std::to_string(len * inner), step = std::to_string(inner);
        const std::string base = "((" + i + ") / " + row + ") * " + row + " + (" + i + ") % " + step;
        const std::string load = operand(n.inputs[0], -1, n.shape, "j" + id, p);
        s << indent << "float max" << id << " = __int_as_float(0xff800000), sum" << id << " = 0.f;  // " << ir::opName(n.op) << " over its row\n";
        s << indent << "for (int k = 0; k < " << len << "; ++k) { const int j" << id << " = " << base << " + k * " << step << "; const float x = "
          << load << "; max" << id << " = x > max" << id << " ? x : max" << id << "; }\n";
        s << indent << "for (int k = 0; k < " << len << "; ++k) { const int j" << id << " = " << base << " + k * " << step << "; sum" << id
          << " += expf(" << load << " - max" << id << "); }\n";
        const std::string self = operand(n.inputs[0], -1, n.shape, i, p);
        expr = n.op == Op::LogSoftmax ? "(" + self + " - max" + id + " - logf(sum" + id + "))" : "(expf(" + self + " - max" + id + ") / sum" + id + ")";
      } else if (n.op == Op::Dropout) {
        expr = "(cas_dropout_keep(" + std::to_string(n.attrs.seed) + "ull, " + i + ", " + floatLiteral(n.attrs.rate) + ") ? " + arg(0) +
               " * " + floatLiteral(1.0f / (1.0f - n.attrs.rate)) + " : 0.f)";
      } else if (kind == ir::OpKind::Unary) {
        expr = unaryExpr(n.op, arg(0));
      } else if (kind == ir::OpKind::Binary) {
        expr = binaryExpr(n.op, arg(0), arg(1));
      } else if (n.op == Op::Where) {
        expr = "(" + arg(0) + " != 0.f ? " + arg(1) + " : " + arg(2) + ")";
      } else {
        throw std::logic_error("unexpected member " + std::string(ir::opName(n.op)));
      }
      s << indent << "const float v" << m << " = " << expr << ";  // " << ir::opName(n.op) << "\n";
      if (stored_[size_t(m)]) s << indent << p.name(storageOf(m)) << "[" << i << "] = v" << m << ";\n";
    }
  }

  void emitElementwise(std::ostringstream& s, int u, Params& p, Segment& seg) {
    const Unit& unit = units_[size_t(u)];
    const std::int64_t count = numel(unit.shape);
    seg.threads = count;
    s << "    if (t < " << count << ") {\n      const int i = t;\n";
    emitMembers(s, unit, u, unit.shape, "i", p, kNoNode, "      ");
    s << "    }\n";
  }

  // The flat input index of output o and reduced position r: kept axes enumerate o, reduced
  // axes enumerate r, both row-major.
  static std::string reductionIndex(const Shape& xs, const std::vector<bool>& reduced) {
    const auto inStride = stridesOf(xs);
    auto axisTerms = [&](bool wantReduced, const std::string& var) {
      std::vector<size_t> axes;
      for (size_t d = 0; d < xs.size(); ++d)
        if (reduced[d] == wantReduced && xs[d] != 1) axes.push_back(d);
      std::string expr;
      std::int64_t below = 1;
      for (size_t k = axes.size(); k-- > 0;) {
        const size_t d = axes[k];
        std::string coord = below == 1 ? var : "(" + var + " / " + std::to_string(below) + ")";
        if (k != 0) coord = "(" + coord + " % " + std::to_string(xs[d]) + ")";
        if (!expr.empty()) expr += " + ";
        expr += coord + (inStride[d] == 1 ? "" : " * " + std::to_string(inStride[d]));
        below *= xs[d];
      }
      return expr.empty() ? std::string("0") : expr;
    };
    return "(" + axisTerms(false, "o") + ") + (" + axisTerms(true, "r") + ")";
  }

  // A reduction whose reduced positions are contiguous in memory: each output gets `chunks`
  // threads (a multiple of 32, so a warp serves one output), which stride over r, sum across
  // the warp and add atomically.
  void emitRowReduction(std::ostringstream& s, int u, Params& p, Segment& seg, const std::vector<bool>& reduced,
                        std::int64_t outCount, std::int64_t len) {
    const Unit& unit = units_[size_t(u)];
    const Node& r = node(unit.reduction);
    const NodeId source = r.inputs[0];
    const Shape& xs = node(source).shape;
    const bool isMax = r.op == Op::ReduceMax;
    // Enough threads in flight to cover memory latency on every SM (a few per output are not).
    std::int64_t chunks = std::min<std::int64_t>((len + 7) / 8, std::max<std::int64_t>(32, kRowReductionThreads / outCount));
    chunks = (chunks + 31) / 32 * 32;
    seg.threads = outCount * chunks;
    const std::string out = p.name(storageOf(unit.reduction));
    s << "    float acc = " << (isMax ? "__int_as_float(0xff800000)" : "0.f") << ";\n";
    s << "    const int o = t / " << chunks << ";\n";
    s << "    if (t < " << seg.threads << ") {\n";
    s << "      for (int r = t % " << chunks << "; r < " << len << "; r += " << chunks << ") {\n";
    s << "        const int i = " << reductionIndex(xs, reduced) << ";\n";
    emitMembers(s, unit, u, xs, "i", p, unit.reduction, "        ");
    const std::string value = operand(source, u, xs, "i", p);
    s << "        acc = " << (isMax ? "(" + value + " > acc ? " + value + " : acc)" : "acc + " + value) << ";\n";
    s << "      }\n    }\n";
    s << "    acc = " << (isMax ? "cas_warp_max(acc)" : "cas_warp_sum(acc)") << ";\n";
    s << "    if ((threadIdx.x & 31) == 0 && t < " << seg.threads << ") " << (isMax ? "cas_atomic_max(&" : "atomicAdd(&") << out
      << "[o], acc);\n";
    fills_.push_back({unit.reduction, isMax ? -1.0f / 0.0f : 0.0f});
  }

  void emitReduction(std::ostringstream& s, int u, Params& p, Segment& seg) {
    const Unit& unit = units_[size_t(u)];
    const Node& r = node(unit.reduction);
    const NodeId source = r.inputs[0];
    const Shape& xs = node(source).shape;
    const std::int64_t outCount = numel(r.shape), total = numel(xs), len = total / std::max<std::int64_t>(outCount, 1);
    const bool isMax = r.op == Op::ReduceMax;
    // Flat input index of (o, r): kept axes enumerate o, reduced axes enumerate r, row-major.
    std::vector<bool> reduced(xs.size(), false);
    for (std::int64_t ax : r.attrs.ints) reduced[size_t(ax)] = true;
    // Which index neighbouring threads step through must follow memory: when the innermost
    // (non-unit) axis is reduced (a bias gradient over N, H, W), a warp walks r for one o and
    // sums across lanes; otherwise (over the batch of a dense layer) lanes take neighbouring o.
    std::int64_t innermost = std::int64_t(xs.size()) - 1;
    while (innermost > 0 && xs[size_t(innermost)] == 1) --innermost;
    if (innermost >= 0 && reduced[size_t(innermost)] && len >= 64) {
      emitRowReduction(s, u, p, seg, reduced, outCount, len);
      return;
    }
    std::int64_t chunks = len <= 8 ? 1 : std::min<std::int64_t>((len + 7) / 8, std::max<std::int64_t>(1, kReductionThreads / outCount));
    seg.threads = outCount * chunks;
    const std::string index = reductionIndex(xs, reduced);
    const std::string init = isMax ? "__int_as_float(0xff800000)" : "0.f";
    const std::string out = p.name(storageOf(unit.reduction));
    s << "    float acc = " << init << ";\n";
    s << "    const int o = t % " << outCount << ";\n";
    s << "    if (t < " << seg.threads << ") {\n";
    s << "      for (int r = t / " << outCount << "; r < " << len << "; r += " << chunks << ") {\n";
    s << "        const int i = " << index << ";\n";
    emitMembers(s, unit, u, xs, "i", p, unit.reduction, "        ");
    const std::string value = operand(source, u, xs, "i", p);
    s << "        acc = " << (isMax ? "(" + value + " > acc ? " + value + " : acc)" : "acc + " + value) << ";\n";
    s << "      }\n    }\n";
    if (chunks == 1) {
      s << "    if (t < " << seg.threads << ") " << out << "[o] = acc;\n";
    } else if (outCount == 1) {
      s << "    acc = " << (isMax ? "cas_warp_max(acc)" : "cas_warp_sum(acc)") << ";\n";
      s << "    if ((threadIdx.x & 31) == 0) " << (isMax ? "cas_atomic_max(" : "atomicAdd(") << out << ", acc);\n";
      fills_.push_back({unit.reduction, isMax ? -1.0f / 0.0f : 0.0f});
    } else {
      s << "    if (t < " << seg.threads << ") " << (isMax ? "cas_atomic_max(&" : "atomicAdd(&") << out << "[o], acc);\n";
      fills_.push_back({unit.reduction, isMax ? -1.0f / 0.0f : 0.0f});
    }
  }

  void emitSpecial(std::ostringstream& s, NodeId id, Params& p, Segment& seg) {
    const Node& n = node(id);
    const Shape& xs = node(n.inputs[0]).shape;
    const std::string out = p.name(storageOf(id));
    auto in = [&](size_t k) { return p.name(storageOf(n.inputs[k])); };
    auto product = [](const Shape& sh, size_t from, size_t to) {
      std::int64_t v = 1;
      for (size_t d = from; d < to; ++d) v *= sh[d];
      return v;
    };
    const std::int64_t count = numel(n.shape);
    seg.threads = count;
    switch (n.op) {
      case Op::Softmax:
      case Op::LogSoftmax: {
        const auto axis = size_t(n.attrs.axis);
        const std::int64_t outer = product(n.shape, 0, axis), len = n.shape[axis], inner = product(n.shape, axis + 1, n.shape.size());
        seg.threads = outer * inner;
        const std::string x = in(0);
        s << "    if (t < " << seg.threads << ") {\n";
        s << "      const int base = (t / " << inner << ") * " << len * inner << " + t % " << inner << ";\n";
        s << "      float m = __int_as_float(0xff800000);\n";
        s << "      for (int k = 0; k < " << len << "; ++k) { const float v = " << x << "[base + k * " << inner << "]; m = v > m ? v : m; }\n";
        s << "      float sum = 0.f;\n";
        s << "      for (int k = 0; k < " << len << "; ++k) sum += expf(" << x << "[base + k * " << inner << "] - m);\n";
        if (n.op == Op::LogSoftmax) {
          s << "      const float logSum = logf(sum);\n";
          s << "      for (int k = 0; k < " << len << "; ++k) " << out << "[base + k * " << inner << "] = " << x << "[base + k * " << inner
            << "] - m - logSum;\n";
        } else {
          s << "      for (int k = 0; k < " << len << "; ++k) " << out << "[base + k * " << inner << "] = expf(" << x << "[base + k * "
            << inner << "] - m) / sum;\n";
        }
        s << "    }\n";
        return;
      }
      case Op::Transpose: {
        const auto inStride = stridesOf(xs), outStride = stridesOf(n.shape);
        std::string src;
        for (size_t d = 0; d < n.shape.size(); ++d) {
          if (n.shape[d] == 1) continue;
          if (!src.empty()) src += " + ";
          src += "((t / " + std::to_string(outStride[d]) + ") % " + std::to_string(n.shape[d]) + ") * " +
                 std::to_string(inStride[size_t(n.attrs.ints[d])]);
        }
        s << "    if (t < " << count << ") " << out << "[t] = " << in(0) << "[" << (src.empty() ? "0" : src) << "];\n";
        return;
      }
      case Op::Slice: {
        const auto axis = size_t(n.attrs.axis);
        const std::int64_t inner = product(xs, axis + 1, xs.size()), rowIn = xs[axis] * inner, rowOut = n.attrs.length * inner;
        s << "    if (t < " << count << ") " << out << "[t] = " << in(0) << "[(t / " << rowOut << ") * " << rowIn << " + "
          << n.attrs.start * inner << " + t % " << rowOut << "];\n";
        return;
      }
      case Op::MaxPool2d:
      case Op::AvgPool2d: {
        const ir::Attrs& a = n.attrs;
        const std::int64_t h = xs[2], w = xs[3], oh = n.shape[2], ow = n.shape[3];
        const bool isMax = n.op == Op::MaxPool2d;
        s << "    if (t < " << count << ") {\n";
        s << "      const int plane = t / " << oh * ow << ", oy = (t / " << ow << ") % " << oh << ", ox = t % " << ow << ";\n";
        s << "      float acc = " << (isMax ? "__int_as_float(0xff800000)" : "0.f") << ";\n";
        s << "      for (int i = 0; i < " << a.kernelH << "; ++i) for (int j = 0; j < " << a.kernelW << "; ++j) {\n";
        s << "        const int y = oy * " << a.strideH << " + i - " << a.padTop << ", x = ox * " << a.strideW << " + j - " << a.padLeft << ";\n";
        s << "        if (y < 0 || y >= " << h << " || x < 0 || x >= " << w << ") continue;\n";
        s << "        const float v = " << in(0) << "[plane * " << h * w << " + y * " << w << " + x];\n";
        s << "        " << (isMax ? "acc = v > acc ? v : acc;" : "acc += v;") << "\n      }\n";
        s << "      " << out << "[t] = " << (isMax ? "acc" : "acc / " + floatLiteral(float(a.kernelH * a.kernelW))) << ";\n    }\n";
        return;
      }
      case Op::MaxPool2dGrad:
      case Op::AvgPool2dGrad: {
        const ir::Attrs& a = n.attrs;
        const bool isMax = n.op == Op::MaxPool2dGrad;
        const Shape& gs = node(n.inputs[isMax ? 1 : 0]).shape;
        const std::int64_t h = n.shape[2], w = n.shape[3], oh = gs[2], ow = gs[3];
        const std::string gy = in(isMax ? 1 : 0);
        seg.threads = numel(gs);
        fills_.push_back({id, 0.0f});
        s << "    if (t < " << seg.threads << ") {\n";
        s << "      const int plane = t / " << oh * ow << ", oy = (t / " << ow << ") % " << oh << ", ox = t % " << ow << ";\n";
        s << "      float best = __int_as_float(0xff800000); int bestAt = -1;\n";
        s << "      for (int i = 0; i < " << a.kernelH << "; ++i) for (int j = 0; j < " << a.kernelW << "; ++j) {\n";
        s << "        const int y = oy * " << a.strideH << " + i - " << a.padTop << ", x = ox * " << a.strideW << " + j - " << a.padLeft << ";\n";
        s << "        if (y < 0 || y >= " << h << " || x < 0 || x >= " << w << ") continue;\n";
        s << "        const int at = plane * " << h * w << " + y * " << w << " + x;\n";
        if (isMax)
          s << "        const float v = " << in(0) << "[at]; if (v > best) { best = v; bestAt = at; }\n";
        else
          s << "        atomicAdd(&" << out << "[at], " << gy << "[t] / " << floatLiteral(float(a.kernelH * a.kernelW)) << ");\n";
        s << "      }\n";
        if (isMax) s << "      if (bestAt >= 0) atomicAdd(&" << out << "[bestAt], " << gy << "[t]);\n";
        s << "    }\n";
        return;
      }
      case Op::Gather: {
        const std::int64_t rows = xs[0], width = xs[1];
        s << "    if (t < " << count << ") {\n      const float id = " << in(1) << "[t / " << width << "];\n";
        s << "      const bool valid = id >= 0.f && id < " << floatLiteral(float(rows)) << " && id == floorf(id);\n";
        s << "      " << out << "[t] = valid ? " << in(0) << "[int(id) * " << width << " + t % " << width << "] : 0.f;\n    }\n";
        return;
      }
      case Op::ScatterAddRows: {
        const std::int64_t rows = n.shape[0], width = n.shape[1];
        seg.threads = numel(node(n.inputs[1]).shape);
        fills_.push_back({id, 0.0f});
        s << "    if (t < " << seg.threads << ") {\n      const int row = int(" << in(0) << "[t / " << width << "]);\n";
        s << "      if (row >= 0 && row < " << rows << ") atomicAdd(&" << out << "[row * " << width << " + t % " << width << "], " << in(1)
          << "[t]);\n    }\n";
        return;
      }
      default: throw std::runtime_error("the CUDA backend cannot run " + where(n, id) + " yet");
    }
  }

  std::string kernelName(int stepIndex, const std::vector<NodeId>& nodes) const {
    std::string name = "k" + std::to_string(stepIndex);
    int shown = 0;
    for (NodeId m : nodes) {
      if (shown == 3) { name += "_etc"; break; }
      name += "_" + std::string(ir::opName(node(m).op));
      ++shown;
    }
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return name;
  }

  static std::string paramList(const Params& p) {
    std::string list;
    for (size_t k = 0; k < p.buffers.size(); ++k) list += (k ? ", " : "") + std::string("float* p") + std::to_string(k);
    return list;
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

  // One elementwise, reduction or special unit as a segment: it takes the next
  // ceil(threads / blockDim.x) blocks of the launch (b counts blocks not yet taken).
  void emitSegment(int u, Params& p, std::ostringstream& body, Step& step) {
    Segment seg;
    seg.members = units_[size_t(u)].members;
    std::ostringstream s;
    const Unit& unit = units_[size_t(u)];
    if (unit.head != kNoNode) emitSpecial(s, unit.head, p, seg);
    else if (unit.reduction != kNoNode) emitReduction(s, u, p, seg);
    else emitElementwise(s, u, p, seg);
    body << "  {  // segment " << step.segments.size() << ": " << seg.members.size() << " node(s), " << seg.threads << " threads\n";
    body << "    const int blocks = (" << seg.threads << " + blockDim.x - 1) / blockDim.x;\n";
    body << "    if (b < blocks) {\n    const int t = b * blockDim.x + threadIdx.x;\n" << s.str() << "    return;\n    }\n";
    body << "    b -= blocks;\n  }\n";
    step.segments.push_back(std::move(seg));
  }

  void emitKernelStep(const PendingStep& ps, Step& step, int index) {
    Params p;
    std::ostringstream body;
    std::vector<NodeId> all;
    for (int u : ps.units) {
      all.insert(all.end(), units_[size_t(u)].members.begin(), units_[size_t(u)].members.end());
      emitSegment(u, p, body, step);
    }
    step.name = kernelName(index, all);
    step.label = labelOf(all);
    std::ostringstream src;
    src << "// " << step.name << ": " << step.segments.size() << " segment(s) over " << all.size() << " IR node(s)"
        << (step.label.empty() ? "" : "; from " + step.label) << "\n";
    src << "// Launch: a 1-D grid; segment k owns the next ceil(threads_k / blockDim.x) blocks.\n";
    src << "extern \"C\" __global__ void " << step.name << "(" << paramList(p) << ") {\n  cas_wait_for_previous_kernel();\n  int b = blockIdx.x;\n" << body.str() << "}\n";
    step.source = src.str();
    step.params = p.buffers;
  }

  bool isSkinny(int u) const {
    const Unit& unit = units_[size_t(u)];
    const Node& mm = node(unit.head);
    return unit.split == 1 && (numel(mm.shape) / mm.shape.back() <= kSkinnyRows || mm.shape.back() <= kNarrowColumns);
  }

  // Tiled GEMMs of one level share a launch: each keeps its own range of blocks.
  void emitMergedGemmStep(const PendingStep& ps, Step& step, int index) {
    Params p;
    std::ostringstream body;
    std::vector<NodeId> all;
    std::int64_t blocks = 0;
    int threads = 0;
    std::string comments;
    const GemmTile tile = gemmTile();
    threads = (tile.bm / tile.tm) * (tile.bn / tile.tn);
    for (int u : ps.units) {
      if (units_[size_t(u)].kind == StepKind::Kernel) {  // rides along in the same launch
        emitSegment(u, p, body, step);
        blocks += (step.segments.back().threads + threads - 1) / threads;
        all.insert(all.end(), units_[size_t(u)].members.begin(), units_[size_t(u)].members.end());
        continue;
      }
      Step part;
      std::string partBody;
      emitGemmStep(u, part, index, p, &partBody);
      const std::int64_t count = part.gridX * part.gridY;
      body << "  if (b < " << count << ") {\n    const int bx = b % " << part.gridX << ", by = b / " << part.gridX << ";\n" << partBody
           << "    return;\n  }\n  b -= " << count << ";\n";
      blocks += count;
      threads = part.blockSize;
      for (const Segment& seg : part.segments) step.segments.push_back(seg);
      all.insert(all.end(), units_[size_t(u)].members.begin(), units_[size_t(u)].members.end());
      comments += part.source;  // the parts' comment lines
    }
    step.name = kernelName(index, all);
    step.label = labelOf(all);
    step.gridX = blocks;
    step.gridY = 1;
    step.blockSize = threads;
    const GemmTile t = gemmTile();
    std::ostringstream s;
    s << "// " << step.name << ": " << ps.units.size() << " independent GEMMs and kernels in one launch, each in its own range of blocks:\n" << comments;
    s << "extern \"C\" __global__ void __launch_bounds__(" << threads << ", " << tileBlocksPerSm() << ") " << step.name << "(" << paramList(p) << ") {\n";
    s << "  cas_wait_for_previous_kernel();\n" << sharedTiles(t);
    s << "  int b = blockIdx.x;\n" << body.str() << "}\n";
    step.source = s.str();
    step.params = p.buffers;
  }

  void emitGemmStep(int u, Step& step, int index) {
    Params p;
    emitGemmStep(u, step, index, p, nullptr);
  }

  // With `body`, only the kernel's body (block coordinates in bx, by; shared tiles As and Bs
  // declared by the caller) goes there, and step.source gets the comment lines.
  void emitGemmStep(int u, Step& step, int index, Params& p, std::string* body) {
    const Unit& unit = units_[size_t(u)];
    const Node& mm = node(unit.head);
    const Shape& as = node(mm.inputs[0]).shape;
    const bool ta = mm.attrs.transposeA, tb = mm.attrs.transposeB;
    const std::int64_t k = ta ? as[0] : as.back(), n = mm.shape.back(), m = numel(mm.shape) / n;
    const std::string a = p.name(storageOf(mm.inputs[0])), b = p.name(storageOf(mm.inputs[1]));
    const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
    auto aAt = [&](const std::string& row, const std::string& col) {
      return a + "[" + (ta ? col + " * " + M + " + " + row : row + " * " + K + " + " + col) + "]";
    };
    auto bAt = [&](const std::string& row, const std::string& col) {
      return b + "[" + (tb ? col + " * " + K + " + " + row : row + " * " + N + " + " + col) + "]";
    };
    const bool split = unit.split > 1, skinny = !split && m <= kSkinnyRows, narrow = !split && !skinny && n <= kNarrowColumns;
    // The epilogue: the fused elementwise members at output (row, col), index i.
    std::ostringstream epi;
    const std::string out = stored_[size_t(unit.head)] ? p.name(storageOf(unit.head)) : std::string();
    if (split) {
      epi << "      atomicAdd(&" << out << "[i], acc);\n";
      fills_.push_back({unit.head, 0.0f});
    } else {
      epi << "      const float v" << unit.head << " = acc;\n";
      if (!out.empty()) epi << "      " << out << "[i] = v" << unit.head << ";\n";
      emitMembers(epi, unit, u, mm.shape, "i", p, kNoNode, "      ");
    }
    step.name = kernelName(index, unit.members);
    step.label = labelOf(unit.members);
    Segment seg;
    seg.members = unit.members;
    std::ostringstream s;
    const std::string shape = "C[" + M + "," + N + "] = A" + (ta ? "^T" : "") + " x B" + (tb ? "^T" : "") + " (K " + K + ")";
    if (narrow) {
      // Few columns (the policy and value heads): a warp per row, lanes split K, the row's
      // N sums are reduced across the warp.
      step.gridX = (m + 7) / 8;
      step.gridY = 1;
      s << "// " << step.name << ": " << shape << ", then " << unit.members.size() - 1 << " fused node(s)"
        << (step.label.empty() ? "" : "; from " + step.label) << "\n";
      s << "// Launch: " << step.gridX << " block(s) of 256 threads; warp = row, lanes stride over K.\n";
      s << "extern \"C\" __global__ void __launch_bounds__(256) " << step.name << "(" << paramList(p) << ") {\n  cas_wait_for_previous_kernel();\n";
      s << "  const int lane = threadIdx.x & 31, row = blockIdx.x * 8 + (threadIdx.x >> 5);\n";
      s << "  if (row >= " << M << ") return;\n";
      s << "  float sum[" << n << "] = {};\n";
      s << "  for (int k = lane; k < " << K << "; k += 32) {\n    const float ak = " << aAt("row", "k") << ";\n";
      s << "    #pragma unroll\n    for (int c = 0; c < " << n << "; ++c) sum[c] += ak * " << bAt("k", "c") << ";\n  }\n";
      s << "  #pragma unroll\n  for (int c = 0; c < " << n << "; ++c) sum[c] = cas_warp_sum(sum[c]);\n";
      s << "  #pragma unroll\n  for (int col = 0; col < " << n << "; ++col) {\n";
      s << "    if (lane != col) continue;\n";
      s << "    const float acc = sum[col];\n    const int i = row * " << N << " + col;\n" << epi.str() << "  }\n}\n";
      seg.threads = step.gridX * 256;
    } else if (skinny) {
      // Few rows (a batch-1 forward pass): lanes own columns, the 8 warps split K, shared
      // memory sums the warps' partial dot products.
      step.gridX = (n + 31) / 32;
      step.gridY = 1;
      s << "// " << step.name << ": " << shape << ", then " << unit.members.size() - 1 << " fused node(s)"
        << (step.label.empty() ? "" : "; from " + step.label) << "\n";
      s << "// Launch: " << step.gridX << " block(s) of 256 threads; lane = column, warp = K slice of " << (k + 7) / 8 << ".\n";
      s << "extern \"C\" __global__ void __launch_bounds__(256) " << step.name << "(" << paramList(p) << ") {\n  cas_wait_for_previous_kernel();\n";
      s << "  __shared__ float partial[8][" << m << "][32];\n";
      s << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, col = blockIdx.x * 32 + lane;\n";
      s << "  float sum[" << m << "] = {};\n";
      s << "  if (col < " << N << ") {\n";
      s << "    const int k0 = warp * " << (k + 7) / 8 << ", k1 = min(" << K << ", k0 + " << (k + 7) / 8 << ");\n";
      s << "    #pragma unroll 8\n    for (int k = k0; k < k1; ++k) {\n      const float bk = " << bAt("k", "col") << ";\n";
      s << "      #pragma unroll\n      for (int r = 0; r < " << m << "; ++r) sum[r] += " << aAt("r", "k") << " * bk;\n    }\n  }\n";
      s << "  #pragma unroll\n  for (int r = 0; r < " << m << "; ++r) partial[warp][r][lane] = sum[r];\n";
      s << "  __syncthreads();\n";
      s << "  if (warp != 0 || col >= " << N << ") return;\n";
      s << "  #pragma unroll\n  for (int row = 0; row < " << m << "; ++row) {\n";
      s << "      float acc = 0.f;\n      #pragma unroll\n      for (int w = 0; w < 8; ++w) acc += partial[w][row][lane];\n";
      s << "      const int i = row * " << N << " + col;\n" << epi.str() << "  }\n}\n";
      seg.threads = step.gridX * 256;
    } else {
      // BM x BN output tiles; each of the (BM/TM)*(BN/TN) threads computes TM x TN outputs; K in
      // steps of BK through shared memory; the next step's tiles are loaded into registers while
      // this one is multiplied.
      const GemmTile t = gemmTile();
      const int threads = (t.bm / t.tm) * (t.bn / t.tn), colsPerPass = t.bn / t.tn;
      const int loadsA = t.bm * t.bk / threads, loadsB = t.bk * t.bn / threads;
      const std::int64_t chunks = split ? unit.split : 1, chunkK = split ? (k + chunks - 1) / chunks : k;
      const std::int64_t rowTiles = (m + t.bm - 1) / t.bm;
      step.gridX = (n + t.bn - 1) / t.bn;
      step.gridY = rowTiles * chunks;
      step.blockSize = threads;
      s << "// " << step.name << ": " << shape << (split ? ", split into " + std::to_string(chunks) + " K chunks added atomically" :
                                                              ", then " + std::to_string(unit.members.size() - 1) + " fused node(s)")
        << (step.label.empty() ? "" : "; from " + step.label) << "\n";
      s << "// Launch: grid (" << step.gridX << ", " << step.gridY << ") of " << t.bm << "x" << t.bn << " tiles" << (split ? " x K chunks" : "")
        << ", " << threads << " threads with " << t.tm << "x" << t.tn << " outputs each, K steps of " << t.bk << ".\n";
      s << "extern \"C\" __global__ void __launch_bounds__(" << threads << ", " << tileBlocksPerSm() << ") " << step.name << "(" << paramList(p) << ") {\n";
      s << "  cas_wait_for_previous_kernel();\n" << sharedTiles(t);
      if (!body) s << "  const int bx = blockIdx.x, by = blockIdx.y;\n";
      const size_t bodyStart = size_t(s.tellp());
      s << "  const int tx = threadIdx.x % " << colsPerPass << ", ty = threadIdx.x / " << colsPerPass << ";\n";
      s << "  const int row0 = (by % " << rowTiles << ") * " << t.bm << ", col0 = bx * " << t.bn << ";\n";
      s << "  const int kBegin = (by / " << rowTiles << ") * " << chunkK << ", kEnd = min(" << K << ", kBegin + " << chunkK << ");\n";
      s << "  float acc[" << t.tm << "][" << t.tn << "] = {};\n";
      s << "  float ra[" << loadsA << "], rb[" << loadsB << "];\n";
      // Element e of a tile: neighbouring threads take neighbouring addresses of the operand.
      const std::string aRow = ta ? "e % " + std::to_string(t.bm) : "e / " + std::to_string(t.bk);
      const std::string aCol = ta ? "e / " + std::to_string(t.bm) : "e % " + std::to_string(t.bk);
      const std::string bCol = tb ? "e / " + std::to_string(t.bk) : "e % " + std::to_string(t.bn);
      const std::string bRow = tb ? "e % " + std::to_string(t.bk) : "e / " + std::to_string(t.bn);
      // Bounds checks only where the sizes do not divide into whole tiles (and K steps).
      const bool wholeK = chunkK % t.bk == 0 && (split ? k % chunkK == 0 : true) && k % t.bk == 0;
      auto guard = [&](bool whole, const std::string& index, const std::string& limit) { return whole ? std::string() : index + " < " + limit; };
      auto both = [](const std::string& x, const std::string& y) {
        return x.empty() ? y : y.empty() ? x : x + " && " + y;
      };
      const std::string aGuard = both(guard(m % t.bm == 0, "m", M), guard(wholeK, "k", "kEnd"));
      const std::string bGuard = both(guard(n % t.bn == 0, "n", N), guard(wholeK, "k", "kEnd"));
      auto loadTiles = [&](const std::string& k0) {
        std::ostringstream l;
        l << "    #pragma unroll\n    for (int q = 0; q < " << loadsA << "; ++q) {\n      const int e = threadIdx.x + " << threads << " * q;\n";
        l << "      const int m = row0 + " << aRow << ", k = " << k0 << " + " << aCol << ";\n";
        l << "      ra[q] = " << (aGuard.empty() ? aAt("m", "k") : "(" + aGuard + ") ? " + aAt("m", "k") + " : 0.f") << ";\n    }\n";
        l << "    #pragma unroll\n    for (int q = 0; q < " << loadsB << "; ++q) {\n      const int e = threadIdx.x + " << threads << " * q;\n";
        l << "      const int n = col0 + " << bCol << ", k = " << k0 << " + " << bRow << ";\n";
        l << "      rb[q] = " << (bGuard.empty() ? bAt("k", "n") : "(" + bGuard + ") ? " + bAt("k", "n") + " : 0.f") << ";\n    }\n";
        return l.str();
      };
      s << "  {\n" << loadTiles("kBegin") << "  }\n";
      s << "  for (int k0 = kBegin; k0 < kEnd; k0 += " << t.bk << ") {\n";
      s << "    #pragma unroll\n    for (int q = 0; q < " << loadsA << "; ++q) { const int e = threadIdx.x + " << threads << " * q; As[" << aCol
        << "][" << aRow << "] = ra[q]; }\n";
      s << "    #pragma unroll\n    for (int q = 0; q < " << loadsB << "; ++q) { const int e = threadIdx.x + " << threads << " * q; Bs[" << bRow
        << "][" << bCol << "] = rb[q]; }\n";
      s << "    __syncthreads();\n";
      s << "    if (k0 + " << t.bk << " < kEnd) {\n      const int next = k0 + " << t.bk << ";\n" << loadTiles("next") << "    }\n";
      s << "    #pragma unroll\n    for (int kk = 0; kk < " << t.bk << "; ++kk) {\n";
      s << "      float a[" << t.tm << "], b[" << t.tn << "];\n";
      s << fragmentLoads("a", "As[kk]", "ty * " + std::to_string(t.tm), t.tm) << fragmentLoads("b", "Bs[kk]", "tx * " + std::to_string(t.tn), t.tn);
      s << "      #pragma unroll\n      for (int r = 0; r < " << t.tm << "; ++r)\n        #pragma unroll\n        for (int c = 0; c < " << t.tn
        << "; ++c) acc[r][c] += a[r] * b[c];\n";
      s << "    }\n    __syncthreads();\n  }\n";
      s << "  #pragma unroll\n  for (int r = 0; r < " << t.tm << "; ++r)\n    #pragma unroll\n    for (int c = 0; c < " << t.tn << "; ++c) {\n";
      s << "      const int row = row0 + ty * " << t.tm << " + r, col = col0 + tx * " << t.tn << " + c;\n";
      s << "      if (row >= " << M << " || col >= " << N << ") continue;\n";
      s << "      const float acc_ = acc[r][c];\n      const int i = row * " << N << " + col;\n";
      std::string e = epi.str();
      for (size_t at = e.find(" acc;"); at != std::string::npos; at = e.find(" acc;", at)) e.replace(at, 5, " acc_;");
      for (size_t at = e.find(", acc)"); at != std::string::npos; at = e.find(", acc)", at)) e.replace(at, 6, ", acc_)");
      s << e << "    }\n";
      seg.threads = step.gridX * step.gridY * threads;
      if (body) {
        const std::string text = s.str();
        *body = text.substr(bodyStart);
        step.source = text.substr(0, text.find("extern \"C\""));
        step.segments.push_back(seg);
        return;
      }
      s << "}\n";
    }
    step.segments.push_back(seg);
    step.source = s.str();
    step.params = p.buffers;
  }

  // bf16/fp16 forward and weight-gradient convolutions: implicit GEMMs on tensor cores
  // (gpu/implicit_conv.hpp). The forward one's epilogue computes the fused elementwise members
  // at each output's NCHW index; the weight gradient is added atomically into a zeroed buffer.
  void emitImplicitConvStep(int u, Step& step, int index) {
    const Unit& unit = units_[size_t(u)];
    const Node& n = node(unit.head);
    const bool forward = n.op == Op::Conv2d;
    const Shape& xs = node(n.inputs[0]).shape;
    const Shape& ws = forward ? node(n.inputs[1]).shape : n.shape;
    const Shape& ys = forward ? n.shape : node(n.inputs[1]).shape;
    const auto& a = n.attrs;
    const ConvGeometry geometry{xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], ys[2], ys[3], a.strideH, a.strideW, a.padTop, a.padLeft,
                                a.padTop || a.padLeft || a.padBottom || a.padRight};
    Params p;
    const std::string x = p.name(storageOf(n.inputs[0])), other = p.name(storageOf(n.inputs[1]));
    std::string out;
    std::ostringstream epi;
    if (forward) {
      epi << "    const float v" << unit.head << " = acc;\n";
      if (stored_[size_t(unit.head)]) epi << "    " << p.name(storageOf(unit.head)) << "[i] = v" << unit.head << ";\n";
      emitMembers(epi, unit, u, n.shape, "i", p, kNoNode, "    ");
    } else {
      out = p.name(storageOf(unit.head));
      fills_.push_back({unit.head, 0.0f});
    }
    step.node = unit.head;
    step.name = kernelName(index, unit.members);
    step.label = labelOf(unit.members);
    const bool bf16 = n.precision == ir::Precision::BF16;
    std::ostringstream comment;
    comment << "// " << step.name << ": " << ir::opName(n.op) << " as an implicit GEMM on tensor cores (" << (bf16 ? "bf16" : "fp16")
            << " products, fp32 sums)" << (forward ? ", then " + std::to_string(unit.members.size() - 1) + " fused node(s)" : ", added atomically")
            << (step.label.empty() ? "" : "; from " + step.label) << "\n";
    comment << "// x " << ir::shapeText(xs, ", ") << ", filters " << ir::shapeText(ws, ", ") << ", stride " << a.strideH << "x" << a.strideW << ", padding " << a.padTop
            << "," << a.padLeft << " -> " << ir::shapeText(ys, ", ") << "\n";
    const ImplicitConvKernel kernel = implicitConv(forward ? ConvPass::Forward : ConvPass::WeightGradient, step.name, comment.str(), geometry, bf16,
                                                   paramList(p), x, other, out, epi.str());
    step.source = kernel.source;
    step.gridX = kernel.gridX;
    step.gridY = kernel.gridY;
    step.blockSize = kernel.blockSize;
    step.params = p.buffers;
    Segment seg;
    seg.members = unit.members;
    seg.threads = kernel.gridX * kernel.gridY * kernel.blockSize;
    step.segments.push_back(seg);
  }

  // A bf16/fp16 input gradient runs on cuDNN's NHWC kernels, on low-precision copies made by
  // generated kernels (sizes are constants, so their index arithmetic is multiplies and shifts):
  // _in0 (the output gradient, NHWC) and _in1 (the filter); _out moves the result back to NCHW
  // fp32. An unpadded convolution whose kernel is a multiple of its stride s folds
  // (space-to-depth): an s x s block of pixels becomes s*s channels, so cuDNN sees stride 1 and
  // a kernel R/s x S/s over C*s*s channels. Filters fold like images with N = K.
  //   to NHWC: dst[n][y][x][(c*s + dy)*s + dx] = src[n][c][y*s + dy][x*s + dx]
  //   back:    the inverse; pixels no output covers (y >= (H/s)*s) get 0.
  void emitConvRelayouts(Step& step, int index) {
    const Node& n = node(step.node);
    const auto& a = n.attrs;
    const Shape& xs = a.refShape;
    const Shape& ws = node(n.inputs[1]).shape;
    const Shape& ys = node(n.inputs[0]).shape;
    const bool unpadded = a.padTop == 0 && a.padLeft == 0 && a.padBottom == 0 && a.padRight == 0;
    const bool folds = unpadded && a.strideH == a.strideW && a.strideH > 1 && ws[2] % a.strideH == 0 && ws[3] % a.strideH == 0;
    step.fold = folds ? int(a.strideH) : 1;
    const int f = step.fold;
    const bool bf16 = n.precision == ir::Precision::BF16;
    const std::string round = bf16 ? "cvt.rn.bf16.f32" : "cvt.rn.f16.f32";
    step.relayoutPrefix = "k" + std::to_string(index) + "_" + std::string(ir::opName(n.op));
    auto loop = [](std::int64_t total) {
      return "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < " + std::to_string(total) + "; i += gridDim.x * blockDim.x) {\n";
    };
    // A per-image transpose through 32 x 32 shared tiles, blocks striding over the tiles (pt
    // along the pixels, ct along the channels): `read` fills tile[j][tx], `write` stores
    // tile[tx][j]. Without the kernel's closing brace.
    auto tiled = [&](const std::string& name, const char* srcType, const char* dstType, std::int64_t N, std::int64_t pt, std::int64_t ct,
                     const std::string& read, const std::string& write) {
      std::ostringstream k;
      k << "extern \"C\" __global__ void __launch_bounds__(256) " << name << "(const " << srcType << "* __restrict__ src, " << dstType << "* __restrict__ dst) {\n"
        << "  __shared__ float tile[32][33];\n  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;\n"
        << "  for (int b = blockIdx.x; b < " << N * pt * ct << "; b += gridDim.x) {\n"
        << "    const int p0 = (b % " << pt << ") * 32, c0 = ((b / " << pt << ") % " << ct << ") * 32, n = b / " << pt * ct << ";\n"
        << "    for (int j = ty; j < 32; j += 8) {\n" << read << "    }\n    __syncthreads();\n"
        << "    for (int j = ty; j < 32; j += 8) {\n" << write << "    }\n    __syncthreads();\n  }\n";
      return k.str();
    };
    auto to = [&](const std::string& name, const Shape& sh, int fold) {
      const std::int64_t N = sh[0], C = sh[1], H = sh[2], W = sh[3], Hs = H / fold, Ws = W / fold, Cs = C * fold * fold;
      std::ostringstream k;
      if (fold == 1) {
        // Per image a [C][H*W] -> [H*W][C] transpose, through 32 x 32 shared tiles so that both
        // the reads and the writes are coalesced; blocks stride over the tiles.
        const std::int64_t HW = H * W;
        std::ostringstream read, write;
        read << "      const int c = c0 + j, p = p0 + tx;\n"
             << "      tile[j][tx] = c < " << C << " && p < " << HW << " ? src[(n * " << C << " + c) * " << HW << " + p] : 0.f;\n";
        write << "      const int p = p0 + j, c = c0 + tx;\n"
              << "      if (p >= " << HW << " || c >= " << C << ") continue;\n"
              << "      unsigned short h;\n      asm(\"" << round << " %0, %1;\" : \"=h\"(h) : \"f\"(tile[tx][j]));\n"
              << "      dst[(n * " << HW << " + p) * " << C << " + c] = h;\n";
        return tiled(name, "float", "unsigned short", N, (HW + 31) / 32, (C + 31) / 32, read.str(), write.str()) + "}\n";
      }
      k << "extern \"C\" __global__ void __launch_bounds__(256) " << name << "(const float* __restrict__ src, unsigned short* __restrict__ dst) {\n"
        << loop(N * Hs * Ws * Cs) << "    const int cs = i % " << Cs << ", x = (i / " << Cs << ") % " << Ws << ", y = (i / " << Cs * Ws << ") % " << Hs
        << ", n = i / " << Cs * Ws * Hs << ";\n"
        << "    const int c = cs / " << fold * fold << ", dy = (cs / " << fold << ") % " << fold << ", dx = cs % " << fold << ";\n"
        << "    unsigned short h;\n    asm(\"" << round << " %0, %1;\" : \"=h\"(h) : \"f\"(src[((n * " << C << " + c) * " << H << " + y * " << fold
        << " + dy) * " << W << " + x * " << fold << " + dx]));\n    dst[i] = h;\n  }\n}\n";
      return k.str();
    };
    // Per image a [Hs*Ws][Cs] -> [C][H][W] transpose (the inverse of `to`), through 32 x 32 shared
    // tiles: reads run along cs, writes along the pixels (every fold-th float when folded).
    auto back = [&](const std::string& name, const Shape& sh, int fold) {
      const std::int64_t N = sh[0], C = sh[1], H = sh[2], W = sh[3], Hs = H / fold, Ws = W / fold, Cs = C * fold * fold;
      const std::int64_t P = Hs * Ws;
      std::ostringstream read, write, k;
      read << "      const int p = p0 + j, cs = c0 + tx;\n      float v = 0.f;\n"
           << "      if (p < " << P << " && cs < " << Cs << ") {\n        const unsigned short h = src[(n * " << P << " + p) * " << Cs << " + cs];\n"
           << (bf16 ? "        v = __uint_as_float(unsigned(h) << 16);\n" : "        asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(v) : \"h\"(h));\n")
           << "      }\n      tile[j][tx] = v;\n";
      write << "      const int cs = c0 + j, p = p0 + tx;\n"
            << "      if (p >= " << P << " || cs >= " << Cs << ") continue;\n"
            << "      const int c = cs / " << fold * fold << ", dy = (cs / " << fold << ") % " << fold << ", dx = cs % " << fold << ", ys = p / " << Ws
            << ", xs = p % " << Ws << ";\n"
            << "      dst[((n * " << C << " + c) * " << H << " + ys * " << fold << " + dy) * " << W << " + xs * " << fold << " + dx] = tile[tx][j];\n";
      k << tiled(name, "unsigned short", "float", N, (P + 31) / 32, (Cs + 31) / 32, read.str(), write.str());
      if (Hs * fold != H || Ws * fold != W)  // pixels no output covers
        k << loop(N * C * H * W) << "    const int x = i % " << W << ", y = (i / " << W << ") % " << H << ";\n"
          << "    if (y >= " << Hs * fold << " || x >= " << Ws * fold << ") dst[i] = 0.f;\n  }\n";
      k << "}\n";
      return k.str();
    };
    const std::string& pre = step.relayoutPrefix;
    std::ostringstream src;
    src << "// " << pre << ": layouts for " << step.name << (step.label.empty() ? "" : " in " + step.label) << " in "
        << (bf16 ? "bf16" : "fp16") << " (NHWC for cuDNN" << (f > 1 ? ", space-to-depth by " + std::to_string(f) : "") << ")"
        << ".\n// Launch: blocks stride over 32 x 32 tiles (the filter's fold: over elements), 256 threads a block.\n";
    src << to(pre + "_in0", ys, 1) << to(pre + "_in1", ws, f) << back(pre + "_out", xs, f);
    step.source = src.str();
  }

  void emit() {
    std::vector<Step> main;
    for (const PendingStep& ps : steps_) {
      Step step;
      step.kind = ps.kind;
      const int index = int(main.size());
      if (ps.kind == StepKind::Kernel) {
        emitKernelStep(ps, step, index);
      } else if (ps.kind == StepKind::Gemm) {
        if (ps.units.size() == 1) emitGemmStep(ps.units[0], step, index);
        else emitMergedGemmStep(ps, step, index);
      } else if (ps.kind == StepKind::ImplicitConv) {
        emitImplicitConvStep(ps.units[0], step, index);
      } else {
        const Unit& unit = units_[size_t(ps.units[0])];
        step.node = unit.head;
        step.name = std::string(ps.kind == StepKind::Blas ? "cublas_" : "cudnn_") + std::string(ir::opName(node(unit.head).op));
        step.label = labelOf(unit.members);
        if (ps.kind == StepKind::Conv && node(unit.head).precision != ir::Precision::F32) emitConvRelayouts(step, index);
        Segment seg;
        seg.members = unit.members;
        step.segments.push_back(seg);
      }
      main.push_back(std::move(step));
    }
    for (const auto& [id, value] : fills_) {
      Step fill;
      fill.kind = StepKind::Fill;
      fill.node = id;
      fill.fill = value;
      fill.name = "fill";
      schedule_.steps.push_back(fill);
    }
    for (Step& s : main) schedule_.steps.push_back(std::move(s));
    for (const auto& [out, in] : copies_) {
      Step copy;
      copy.kind = StepKind::Copy;
      copy.node = out;
      copy.target = in;
      copy.name = "copy";
      schedule_.steps.push_back(copy);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (unitOf_[i] >= 0 && !stored_[i]) ++schedule_.fusedNodes;
  }

  const Graph& g_;
  ScheduleOptions options_;
  std::vector<int> unitOf_;
  std::vector<NodeId> root_;
  std::vector<Unit> units_;
  std::vector<int> order_;
  std::vector<bool> stored_;
  std::vector<bool> view_;  // slices read through their index mapping, never stored
  std::vector<PendingStep> steps_;
  std::set<NodeId> aliased_;
  std::vector<std::pair<NodeId, NodeId>> copies_;
  std::vector<std::pair<NodeId, float>> fills_;
  Schedule schedule_;
};

}  // namespace

std::string Step::describe() const {
  std::ostringstream s;
  std::int64_t threads = 0;
  size_t nodes = 0;
  for (const Segment& seg : segments) {
    threads += seg.threads;
    nodes += seg.members.size();
  }
  switch (kind) {
    case StepKind::Kernel: s << "kernel " << name << ": " << segments.size() << " segment(s), " << nodes << " node(s), " << threads << " threads"; break;
    case StepKind::Gemm: s << "kernel " << name << ": GEMM + " << nodes - 1 << " fused node(s), grid " << gridX << "x" << gridY; break;
    case StepKind::Blas: s << name << " (cuBLAS)"; break;
    case StepKind::Conv: s << name << " (cuDNN)"; break;
    case StepKind::ImplicitConv: s << "kernel " << name << ": implicit-GEMM convolution + " << nodes - 1 << " fused node(s), grid " << gridX << "x" << gridY; break;
    case StepKind::Fill: s << "fill %" << node; break;
    case StepKind::Copy: s << "copy %" << node << " -> %" << target; break;
  }
  if (!label.empty()) s << "  [" << label << "]";
  return s.str();
}

Schedule planSchedule(const Graph& g, const ScheduleOptions& options) { return Planner(g, options).run(); }

const std::string& kernelPrelude() {
  static const std::string prelude = [] {
    // tanh from the constants the CPU backend uses, in the same order of operations.
    std::string tanh = "// Device helpers shared by every generated kernel (same arithmetic as core/ir/ops.hpp).\n"
                       "__device__ __forceinline__ float cas_tanh(float x) {\n"
                       "  const float kClamp = " + floatLiteral(ir::kTanhClamp) + ";\n"
                       "  x = x < -kClamp ? -kClamp : (x > kClamp ? kClamp : x);\n"
                       "  const float x2 = x * x;\n"
                       "  float p = " + floatLiteral(ir::kTanhNumerator[0]) + ";\n";
    for (size_t k = 1; k < std::size(ir::kTanhNumerator); ++k) tanh += "  p = p * x2 + " + floatLiteral(ir::kTanhNumerator[k]) + ";\n";
    tanh += "  p = p * x;\n  float q = " + floatLiteral(ir::kTanhDenominator[0]) + ";\n";
    for (size_t k = 1; k < std::size(ir::kTanhDenominator); ++k) tanh += "  q = q * x2 + " + floatLiteral(ir::kTanhDenominator[k]) + ";\n";
    tanh += "  return p / q;\n}\n";
    return tanh + R"(__device__ __forceinline__ float cas_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float cas_gelu_derivative(float x) {
  const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
  return cdf + x * pdf;
}
__device__ __forceinline__ bool cas_dropout_keep(unsigned long long seed, unsigned long long index, float rate) {
  unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53 >= double(rate);
}
// Step kernels may start before the previous kernel in the stream has finished (programmatic
// dependent launch, sm_90 and later): each waits here, before it touches memory, until that
// kernel has finished and its writes are visible.
__device__ __forceinline__ void cas_wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ float cas_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float cas_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) { const float w = __shfl_xor_sync(0xffffffffu, v, o); v = w > v ? w : v; }
  return v;
}
__device__ __forceinline__ void cas_atomic_max(float* address, float v) {
  if (v >= 0.f) atomicMax(reinterpret_cast<int*>(address), __float_as_int(v));
  else atomicMin(reinterpret_cast<unsigned int*>(address), __float_as_uint(v));
}
)";
  }();
  return prelude;
}

}  // namespace cas::gpu
