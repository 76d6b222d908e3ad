#pragma once
// Comparing two searches: root statistics in their bits, and whole trees node by node.
#include <QString>

#include <cstring>
#include <vector>

#include "core/search/self_play_search.hpp"
#include "core/search/tree.hpp"

namespace cas::test {

// The first difference between two trees, over the nodes reachable from the root and the
// allocation state; empty when they are equal. lastUsed is compared by order only: the CPU's
// clock counts every game's steps, the device's each game's own.
inline QString treeDifference(const search::Tree& a, const search::Tree& b) {
  const auto ua = a.usage(), ub = b.usage();
  if (ua.nextBlock != ub.nextBlock || ua.inUse != ub.inUse || ua.recycled != ub.recycled || ua.freeBlocks != ub.freeBlocks)
    return QStringLiteral("allocation state: next block %1/%2, in use %3/%4, recycled %5/%6, free %7/%8")
        .arg(ua.nextBlock).arg(ub.nextBlock).arg(ua.inUse).arg(ub.inUse).arg(ua.recycled).arg(ub.recycled)
        .arg(ua.freeBlocks.size()).arg(ub.freeBlocks.size());
  std::vector<std::int32_t> queue = {0};
  for (size_t q = 0; q < queue.size(); ++q) {
    const auto s = size_t(queue[q]);
    if (a.visits[s] != b.visits[s] || std::memcmp(&a.valueSum[s], &b.valueSum[s], 4) || std::memcmp(&a.prior[s], &b.prior[s], 4) ||
        a.firstChild[s] != b.firstChild[s] || a.childCount[s] != b.childCount[s] || a.action[s] != b.action[s] ||
        a.virtualLoss[s] != b.virtualLoss[s] || (s > 0 && a.parent[s] != b.parent[s]))
      return QStringLiteral("slot %1: N %2/%3, W %4/%5, P %6/%7, first child %8/%9")
          .arg(s).arg(a.visits[s]).arg(b.visits[s]).arg(double(a.valueSum[s]), 0, 'g', 9).arg(double(b.valueSum[s]), 0, 'g', 9)
          .arg(double(a.prior[s]), 0, 'g', 9).arg(double(b.prior[s]), 0, 'g', 9).arg(a.firstChild[s]).arg(b.firstChild[s]);
    if (s > 0 && a.parent[s] >= 0 && (a.lastUsed[s] < a.lastUsed[size_t(a.parent[s])]) != (b.lastUsed[s] < b.lastUsed[size_t(b.parent[s])]))
      return QStringLiteral("slot %1: lastUsed order against its parent differs").arg(s);
    if (a.expanded(std::int32_t(s)))
      for (int k = 0; k < a.childCount[s]; ++k) queue.push_back(a.child(std::int32_t(s), k));
  }
  return {};
}

inline QString statsDifference(const search::RootStats& a, const search::RootStats& b) {
  if (a.visits != b.visits) return QStringLiteral("visits differ");
  if (a.chosen != b.chosen || a.played != b.played) return QStringLiteral("chosen %1/%2, played %3/%4").arg(a.chosen).arg(b.chosen).arg(a.played).arg(b.played);
  if (a.pv != b.pv) return QStringLiteral("principal variations differ");
  if (std::memcmp(a.policy.data(), b.policy.data(), a.policy.size() * 4) || std::memcmp(a.q.data(), b.q.data(), a.q.size() * 4) ||
      std::memcmp(a.prior.data(), b.prior.data(), a.prior.size() * 4) || std::memcmp(&a.value, &b.value, 4))
    return QStringLiteral("policy, q, prior or value differ in their bits");
  if (a.treeNodes != b.treeNodes) return QStringLiteral("tree nodes %1/%2").arg(a.treeNodes).arg(b.treeNodes);
  return {};
}

}  // namespace cas::test
