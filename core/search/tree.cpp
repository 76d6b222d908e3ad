#include "core/search/tree.hpp"

#include <algorithm>
#include <numeric>

namespace cas::search {

Tree::Tree(int actionCount, int nodeBudget) : actions_(actionCount) {
  blocks_ = std::max(1, (nodeBudget - 1) / actionCount);
  const size_t slots = size_t(1 + blocks_ * actionCount);
#define CAS_TREE_RESIZE(name, type, root) name.assign(slots, type{});
  CAS_TREE_FIELDS(CAS_TREE_RESIZE)
#undef CAS_TREE_RESIZE
  firstChild.assign(slots, kUnexpanded);  // a scan over the slots sees only nodes
  clear();
}

void Tree::clear() {
  free_.clear();
  nextBlock_ = 1;
  inUse_ = 1;
#define CAS_TREE_ROOT(name, type, root) name[0] = root;
  CAS_TREE_FIELDS(CAS_TREE_ROOT)
#undef CAS_TREE_ROOT
}

std::int32_t Tree::allocateBlock(std::uint32_t step) {
  if (free_.empty() && nextBlock_ + actions_ > budget()) {
    if (!recycle(step)) return kNone;
  }
  std::int32_t start;
  if (!free_.empty()) {
    start = free_.back();
    free_.pop_back();
  } else {
    start = nextBlock_;
    nextBlock_ += actions_;
  }
  return start;
}

bool Tree::expand(std::int32_t s, const std::vector<std::pair<int, float>>& children, std::uint32_t step) {
  if (expanded(s) || children.empty()) return expanded(s);
  const std::int32_t start = allocateBlock(step);
  if (start == kNone) return false;
  firstChild[size_t(s)] = start;
  childCount[size_t(s)] = std::int16_t(children.size());
  for (size_t k = 0; k < children.size(); ++k) {
    const size_t c = size_t(start) + k;
    visits[c] = 0;
    valueSum[c] = 0;
    prior[c] = children[k].second;
    firstChild[c] = kUnexpanded;
    childCount[c] = 0;
    parent[c] = s;
    action[c] = std::int16_t(children[k].first);
    virtualLoss[c] = 0;
    lastUsed[c] = step;
  }
  for (size_t k = children.size(); k < size_t(actions_); ++k) firstChild[size_t(start) + k] = kUnexpanded;
  inUse_ += int(children.size());
  return true;
}

void Tree::adopt(Usage u) {
  nextBlock_ = u.nextBlock;
  inUse_ = u.inUse;
  recycled_ = u.recycled;
  free_ = std::move(u.freeBlocks);
}

void Tree::freeSubtree(std::int32_t s) {
  std::vector<std::int32_t> stack = {s};
  while (!stack.empty()) {
    const std::int32_t n = stack.back();
    stack.pop_back();
    if (!expanded(n)) continue;
    for (int k = 0; k < childCount[size_t(n)]; ++k) stack.push_back(child(n, k));
    inUse_ -= childCount[size_t(n)];
    recycled_ += childCount[size_t(n)];
    free_.push_back(firstChild[size_t(n)]);
    firstChild[size_t(n)] = kUnexpanded;
    childCount[size_t(n)] = 0;
  }
}

bool Tree::recycle(std::uint32_t step) {
  // Candidates: expanded nodes below the root that no pending selection passes through (their
  // virtual loss is 0) and that this step has not used, oldest first, by slot among equals.
  std::vector<std::int32_t> candidates;
  for (std::int32_t s = 1; s < nextBlock_; ++s)
    if (expanded(s) && virtualLoss[size_t(s)] == 0 && lastUsed[size_t(s)] < step) candidates.push_back(s);
  std::stable_sort(candidates.begin(), candidates.end(), [&](std::int32_t a, std::int32_t b) { return lastUsed[size_t(a)] < lastUsed[size_t(b)]; });
  const int target = std::max(1, blocks_ / 8);  // free an eighth of the blocks at a time
  const size_t before = free_.size();
  for (std::int32_t n : candidates) {
    if (int(free_.size() - before) >= target) break;
    if (expanded(n)) freeSubtree(n);  // else it went back with an ancestor collapsed before it
  }
  return free_.size() > before;
}

void Tree::reroot(std::int32_t c) {
  // Breadth-first copy of c's subtree into fresh arrays; everything else is dropped.
  Tree fresh(actions_, budget());
  std::vector<std::pair<std::int32_t, std::int32_t>> queue = {{c, 0}};  // (old slot, new slot)
  // Every field travels; then what the move changes: the new parent, no pending selections, and
  // no children until the queue reaches the node.
  auto copyNode = [&](std::int32_t from, std::int32_t to, std::int32_t newParent) {
#define CAS_TREE_COPY(name, type, root) fresh.name[size_t(to)] = name[size_t(from)];
    CAS_TREE_FIELDS(CAS_TREE_COPY)
#undef CAS_TREE_COPY
    fresh.parent[size_t(to)] = newParent;
    fresh.virtualLoss[size_t(to)] = 0;
    fresh.firstChild[size_t(to)] = kUnexpanded;
    fresh.childCount[size_t(to)] = 0;
  };
  copyNode(c, 0, kNone);
  for (size_t q = 0; q < queue.size(); ++q) {
    const auto [from, to] = queue[q];
    if (!expanded(from)) continue;
    const std::int32_t start = fresh.allocateBlock(0);
    fresh.firstChild[size_t(to)] = start;
    fresh.childCount[size_t(to)] = childCount[size_t(from)];
    fresh.inUse_ += childCount[size_t(from)];
    for (int k = 0; k < childCount[size_t(from)]; ++k) {
      copyNode(child(from, k), start + k, to);
      queue.push_back({child(from, k), start + k});
    }
  }
  fresh.recycled_ = recycled_;
  *this = std::move(fresh);
}

}  // namespace cas::search
