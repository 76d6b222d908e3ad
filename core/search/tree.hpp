#pragma once
// The search tree of one game: flat arrays (struct of arrays), indices instead of pointers.
//
//   slot:      0        1 .. A          A+1 .. 2A         ...
//            [root]  [block: children of root]  [block: children of some node]  ...  (budget)
//
//   visits[s]       N: completed visits of the edge into s
//   valueSum[s]     W: sum of values backed up through s, from the point of view of the player
//                   who made the move into s (so the parent picks the child with the best W/N)
//   prior[s]        P: the network's probability of the move into s
//   firstChild[s]   slot of s's first child, kUnexpanded when s has none; a node's children sit
//                   in one block of A (action count) consecutive slots, the first childCount used
//   childCount[s]   legal moves at s
//   parent[s]       kNone for the root
//   action[s]       the move into s
//   virtualLoss[s]  selections through s whose leaf still awaits evaluation
//   lastUsed[s]     the search step that last passed through s (least-recently-used recycling)
//
// Blocks are recycled through a free list (a stack); when none is free, the least recently used
// expanded nodes off every pending path are collapsed back into leaves (they keep N and W), which
// frees their descendants' blocks: candidates in order of (lastUsed, slot), until an eighth of the
// blocks is free. Slots of a block beyond its node's children are kept unexpanded, so a scan over
// the slots sees only nodes. The fields are declared once, in tree_fields.hpp. The device search
// (gpu/search/device_tree.cuh) keeps the same arrays and follows the same rules, slot for slot. Thread-safety: one thread at a time per tree.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/search/tree_fields.hpp"

namespace cas::search {

class Tree {
 public:
  static constexpr std::int32_t kNone = -1;
  static constexpr std::int32_t kUnexpanded = -1;

  Tree(int actionCount, int nodeBudget);

  void clear();  // just an unexpanded root
  int actionCount() const { return actions_; }
  int budget() const { return int(visits.size()); }
  int nodesInUse() const { return inUse_; }
  std::int64_t recycledNodes() const { return recycled_; }

  bool expanded(std::int32_t s) const { return firstChild[size_t(s)] != kUnexpanded; }
  // Allocates s's children for the given (action, prior) pairs; may recycle other subtrees
  // first. Returns false when even recycling cannot free a block (the budget is too small for
  // the pending paths), in which case s stays a leaf.
  bool expand(std::int32_t s, const std::vector<std::pair<int, float>>& children, std::uint32_t step);
  // Makes child `c` of the root the new root, keeping its subtree (compacted to the front).
  void reroot(std::int32_t c);
  // Copies of a node's children slots, for iteration.
  std::int32_t child(std::int32_t s, int k) const { return firstChild[size_t(s)] + k; }

  // The allocation state besides the arrays: what a copy of a device tree carries over.
  struct Usage {
    std::int32_t nextBlock = 1;            // blocks never used yet start here
    int inUse = 1;
    std::int64_t recycled = 0;
    std::vector<std::int32_t> freeBlocks;  // free block starts, the top of the stack last
  };
  Usage usage() const { return {nextBlock_, inUse_, recycled_, free_}; }
  void adopt(Usage u);

  // One array per field of tree_fields.hpp: visits, valueSum, prior, firstChild, parent,
  // lastUsed, childCount, action, virtualLoss.
#define CAS_TREE_ARRAY(name, type, root) std::vector<type> name;
  CAS_TREE_FIELDS(CAS_TREE_ARRAY)
#undef CAS_TREE_ARRAY

 private:
  std::int32_t allocateBlock(std::uint32_t step);
  void freeSubtree(std::int32_t s);  // frees the blocks below s; s becomes a leaf
  bool recycle(std::uint32_t step);

  int actions_;
  int blocks_;                      // blocks after the root slot
  std::vector<std::int32_t> free_;  // free block starts
  std::int32_t nextBlock_ = 1;
  int inUse_ = 1;
  std::int64_t recycled_ = 0;
};

}  // namespace cas::search
