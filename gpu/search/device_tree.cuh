#pragma once
// The device search's trees: core/search/tree.hpp's arrays for every game at once, in device
// memory from the runtime's pool, and the same operations (expand, recycle, reroot), slot for
// slot, so that a copy of a game's arrays is a core search::Tree.
//
//   field array [budget * games], slot-major:
//       slot 0: game 0, game 1, .. game G-1 | slot 1: game 0, game 1, .. | ...
//     one array per field of core/search/tree_fields.hpp (meanings: core/search/tree.hpp)
//   so that the lanes of a warp (neighbouring games) walking their trees alike, as they do near
//   the root, read neighbouring words: one memory transaction instead of 32
//   spare  [games * budget] x the same fields: rerooting copies the kept subtree there, then back
//   work   [games * budget] i32:  recycling's depth-first stack, rerooting's slot map
//   freeBlocks [games * blocks] i32: each game's free list (a stack, top last)
//   GameSlot   [games]:            the allocation state, step counter, Gumbel arms, ...
//
// One thread owns one game's tree for the whole of every kernel (no atomics on tree fields):
// selection with virtual loss, expansion and backup run in the CPU search's order, which is
// what makes k leaves per step reproduce the CPU's statistics. Functions here are CAS_HD so
// the host test (tests/gpu/test_search_port.cpp) runs the very code the kernels run.
// Thread-safety: a GameTree is used by the one thread that owns its game.
#include <cstdint>

#include "core/search/tree_fields.hpp"
#include "core/support/host_device.hpp"

namespace cas::gpu::search {

constexpr int kMaxActions = 16;  // per game: Gumbel arms, clean root priors
constexpr int kMaxPv = 64;
constexpr std::int32_t kNone = -1, kUnexpanded = -1;

// A pointer per field of core/search/tree_fields.hpp, each to [budget * games] entries.
struct TreeFields {
#define CAS_TREE_POINTER(name, type, root) type* name;
  CAS_TREE_FIELDS(CAS_TREE_POINTER)
#undef CAS_TREE_POINTER
};

// Per game, besides the arrays. Gumbel's arms are child indices, best first.
struct GameSlot {
  std::int32_t nextBlock, inUse, freeCount, remaining;
  std::int64_t recycled;
  std::int64_t evaluations;  // leaves this game sent to the evaluator
  std::uint32_t step;   // this game's simulation steps: the lastUsed clock
  std::uint32_t draws;  // root preparations: the random streams' `draw`
  std::int32_t armCount, phaseVisits;
  std::uint8_t listed;       // part of the current search() call
  std::uint8_t rootPending;  // the root awaits its evaluation
  std::int8_t arms[kMaxActions];
  float score[kMaxActions];  // Gumbel: g + log prior, by child index
  float clean[kMaxActions];  // the root's priors without noise, by child index
};

struct TreeStorage {
  TreeFields main, spare;
  std::int32_t* work;
  std::int32_t* freeBlocks;
  GameSlot* gameSlots;
  int budget, blocks, actions, games;
};

class GameTree {
 public:
  CAS_HD GameTree(const TreeStorage& s, int game)
      : f_(s.main), spare_(s.spare), slot_(s.gameSlots[game]), work_(s.work + std::int64_t(game) * s.budget),
        free_(s.freeBlocks + std::int64_t(game) * s.blocks), game_(game), games_(s.games), budget_(s.budget),
        blocks_(s.blocks), actions_(s.actions) {}

  CAS_HD GameSlot& slot() { return slot_; }
  CAS_HD std::int64_t at(std::int32_t s) const { return std::int64_t(s) * games_ + game_; }  // a slot's index
  // A field of slot s: visits(s), valueSum(s), ... (core/search/tree_fields.hpp).
#define CAS_TREE_ACCESSOR(name, type, root) \
  CAS_HD type& name(std::int32_t s) { return f_.name[at(s)]; }
  CAS_TREE_FIELDS(CAS_TREE_ACCESSOR)
#undef CAS_TREE_ACCESSOR
  CAS_HD bool expanded(std::int32_t s) { return firstChild(s) != kUnexpanded; }
  CAS_HD std::int32_t child(std::int32_t s, int k) { return firstChild(s) + k; }

  CAS_HD void clear() {
    slot_.freeCount = 0;
    slot_.nextBlock = 1;
    slot_.inUse = 1;
#define CAS_TREE_ROOT(name, type, root) name(0) = root;
    CAS_TREE_FIELDS(CAS_TREE_ROOT)
#undef CAS_TREE_ROOT
    slot_.armCount = 0;
  }

  // Children for the legal actions (bits of `legal`, in action order) with priors[i] for the
  // i-th; false when no block can be freed (the node stays a leaf).
  CAS_HD bool expand(std::int32_t s, std::uint32_t legal, const float* priors, std::uint32_t step) {
    if (expanded(s) || legal == 0) return expanded(s);
    const std::int32_t start = allocateBlock(step);
    if (start == kNone) return false;
    int n = 0;
    for (int a = 0; a < actions_; ++a)
      if ((legal >> a) & 1u) {
        const std::int32_t c = start + n;
        setNode(f_, c, 0, 0.0f, priors[n], s, std::int16_t(a), step);
        firstChild(c) = kUnexpanded;
        childCount(c) = 0;
        ++n;
      }
    for (int k = n; k < actions_; ++k) firstChild(start + k) = kUnexpanded;
    firstChild(s) = start;
    childCount(s) = std::int16_t(n);
    slot_.inUse += n;
    return true;
  }

  // Makes child c of the root the root, keeping its subtree: breadth first into the spare
  // arrays (new slots in the order the CPU's queue assigns them), then back.
  CAS_HD void reroot(std::int32_t c) {
    std::int32_t next = 1;
    int inUse = 1;
    work_[0] = c;
    copyNode(c, 0, kNone);
    for (std::int32_t to = 0; to < next; ++to) {
      const std::int32_t from = work_[to];
      if (from == kNone) continue;
      if (!expanded(from)) {
        spare_.firstChild[at(to)] = kUnexpanded;
        spare_.childCount[at(to)] = 0;
        continue;
      }
      const std::int32_t start = next;
      const int count = childCount(from);
      next += actions_;
      spare_.firstChild[at(to)] = start;
      spare_.childCount[at(to)] = std::int16_t(count);
      inUse += count;
      for (int k = 0; k < actions_; ++k) {
        work_[start + k] = k < count ? child(from, k) : kNone;
        if (k < count) copyNode(child(from, k), start + k, to);
        else spare_.firstChild[at(start + k)] = kUnexpanded;
      }
    }
    for (std::int32_t s = 0; s < next; ++s) {
      const std::int64_t i = at(s);
#define CAS_TREE_COPY_BACK(name, type, root) f_.name[i] = spare_.name[i];
      CAS_TREE_FIELDS(CAS_TREE_COPY_BACK)
#undef CAS_TREE_COPY_BACK
    }
    slot_.nextBlock = next;
    slot_.inUse = inUse;
    slot_.freeCount = 0;
  }

 private:
  CAS_HD void setNode(const TreeFields& t, std::int32_t s, std::int32_t n, float w, float p, std::int32_t par, std::int16_t act, std::uint32_t used) {
    const std::int64_t i = at(s);
    t.visits[i] = n;
    t.valueSum[i] = w;
    t.prior[i] = p;
    t.parent[i] = par;
    t.action[i] = act;
    t.virtualLoss[i] = 0;
    t.lastUsed[i] = used;
  }
  // Rerooting's copy into the spare arrays: every field travels, then what the move changes (the
  // parent, no pending selections); the children follow when the queue reaches the node.
  CAS_HD void copyNode(std::int32_t from, std::int32_t to, std::int32_t newParent) {
    const std::int64_t i = at(from), j = at(to);
#define CAS_TREE_COPY(name, type, root) spare_.name[j] = f_.name[i];
    CAS_TREE_FIELDS(CAS_TREE_COPY)
#undef CAS_TREE_COPY
    spare_.parent[j] = newParent;
    spare_.virtualLoss[j] = 0;
  }

  CAS_HD std::int32_t allocateBlock(std::uint32_t step) {
    if (slot_.freeCount == 0 && slot_.nextBlock + actions_ > budget_ && !recycle(step)) return kNone;
    if (slot_.freeCount > 0) return free_[--slot_.freeCount];
    const std::int32_t start = slot_.nextBlock;
    slot_.nextBlock += actions_;
    return start;
  }

  // s's descendants' blocks go back to the free list; s becomes a leaf (core: Tree::freeSubtree).
  CAS_HD void freeSubtree(std::int32_t s) {
    int top = 0;
    work_[top++] = s;
    while (top > 0) {
      const std::int32_t n = work_[--top];
      if (!expanded(n)) continue;
      const int count = childCount(n);
      for (int k = 0; k < count; ++k) work_[top++] = child(n, k);
      slot_.inUse -= count;
      slot_.recycled += count;
      free_[slot_.freeCount++] = firstChild(n);
      firstChild(n) = kUnexpanded;
      childCount(n) = 0;
    }
  }

  CAS_HD bool candidate(std::int32_t s, std::uint32_t step) { return expanded(s) && virtualLoss(s) == 0 && lastUsed(s) < step; }

  // core: Tree::recycle. Candidates go in order of (lastUsed, slot): each pass finds the next
  // lastUsed value among them and collapses its nodes in slot order, until an eighth of the
  // blocks is free (recycling is rare; the passes keep it free of a sort and its memory).
  CAS_HD bool recycle(std::uint32_t step) {
    const int target = blocks_ / 8 > 1 ? blocks_ / 8 : 1;
    const int before = slot_.freeCount;
    bool first = true;
    std::uint32_t previous = 0;
    for (;;) {
      std::uint32_t value = 0xFFFFFFFFu;
      bool found = false;
      for (std::int32_t s = 1; s < slot_.nextBlock; ++s)
        if (candidate(s, step) && (first || lastUsed(s) > previous) && lastUsed(s) <= value) {
          value = lastUsed(s);
          found = true;
        }
      if (!found) break;
      for (std::int32_t s = 1; s < slot_.nextBlock; ++s)
        if (lastUsed(s) == value && candidate(s, step)) {
          if (slot_.freeCount - before >= target) return true;
          freeSubtree(s);
        }
      previous = value;
      first = false;
    }
    return slot_.freeCount > before;
  }

  TreeFields f_, spare_;
  GameSlot& slot_;
  std::int32_t* work_;
  std::int32_t* free_;
  int game_, games_;
  int budget_, blocks_, actions_;
};

}  // namespace cas::gpu::search
