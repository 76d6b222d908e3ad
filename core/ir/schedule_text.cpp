// The schedule as printable text (`cuda-agent check --ir`): its steps, their units and the
// in-place updates.
#include "core/ir/schedule.hpp"

#include <sstream>

namespace cas::ir {

const char* stepKindName(StepKind k) {
  switch (k) {
    case StepKind::Kernel: return "kernel";
    case StepKind::Gemm: return "gemm";
    case StepKind::Blas: return "blas";
    case StepKind::Conv: return "conv";
    case StepKind::ImplicitConv: return "implicit-conv";
    case StepKind::Fill: return "fill";
    case StepKind::Copy: return "copy";
  }
  return "?";
}

const char* unitKindName(UnitKind k) {
  switch (k) {
    case UnitKind::Elementwise: return "elementwise";
    case UnitKind::Reduction: return "reduction";
    case UnitKind::Special: return "special";
    case UnitKind::Gemm: return "gemm";
    case UnitKind::ImplicitConv: return "implicit-conv";
    case UnitKind::Blas: return "blas";
    case UnitKind::Conv: return "conv";
  }
  return "?";
}

const char* gemmVariantName(GemmVariant v) {
  switch (v) {
    case GemmVariant::Narrow: return "narrow";
    case GemmVariant::Skinny: return "skinny";
    case GemmVariant::Tiled: return "tiled";
    case GemmVariant::SplitK: return "split-k";
  }
  return "?";
}

namespace {

std::string unitText(const Schedule& s, const Graph& g, int index) {
  const Unit& u = s.units[size_t(index)];
  std::ostringstream t;
  t << "unit " << index << "  " << unitKindName(u.kind);
  if (u.kind == UnitKind::Gemm)
    t << " " << gemmVariantName(u.gemm.variant) << " " << u.gemm.m << "x" << u.gemm.n << " K " << u.gemm.k << (u.gemm.transposeA ? " A^T" : "")
      << (u.gemm.transposeB ? " B^T" : "") << (u.gemm.split > 1 ? " in " + std::to_string(u.gemm.split) + " K chunks" : "");
  if (u.kind == UnitKind::Reduction)
    t << " " << (u.reduce.layout == ReductionLayout::Rows ? "rows" : "columns") << " " << u.reduce.outputs << " x " << u.reduce.length
      << ", " << u.reduce.chunks << " thread(s) an output" << (u.reduce.atomic ? ", atomic" : "");
  if (u.threads > 0) t << ", " << u.threads << " threads";
  t << ":";
  std::string stored;
  for (NodeId m : u.members) {
    t << " %" << m << " " << opName(g.node(m).op);
    if (s.stored[size_t(m)]) stored += (stored.empty() ? "%" : ", %") + std::to_string(m);
  }
  t << "  (stored: " << (stored.empty() ? "none" : stored) << ")";
  return t.str();
}

}  // namespace

std::string toText(const Schedule& s, const Graph& g) {
  std::ostringstream t;
  t << "schedule: " << s.launches() << " launches, " << s.units.size() << " units, " << s.fusedNodes << " nodes in registers\n";
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& st = s.steps[k];
    t << "  step " << k << "  " << stepKindName(st.kind) << "  " << st.name;
    if (st.kind == StepKind::Fill) t << " %" << st.node << " = " << st.fill;
    if (st.kind == StepKind::Copy) t << " %" << st.node << " -> %" << st.target;
    if (st.kind != StepKind::Fill && st.kind != StepKind::Copy) t << "  level " << st.level;
    if (!st.label.empty()) t << "  [" << st.label << "]";
    t << "\n";
    for (int u : st.units) t << "    " << unitText(s, g, u) << "\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (s.storage[i] != kNoNode && s.storage[i] != NodeId(i) && g.nodes[i].op != Op::Reshape)
      t << "  in place: %" << i << " is written into %" << s.storage[i] << "\n";
  return t.str();
}

}  // namespace cas::ir
