#pragma once
// The search tree's per-node fields, declared once (meanings: tree.hpp). Every copy of the list
// is generated from CAS_TREE_FIELDS: the host tree's arrays (tree.hpp) and their reset and
// rerooting copy (tree.cpp), the device trees' arrays, accessors and rerooting copy
// (gpu/search/device_tree.cuh), the gather of one game's tree into contiguous arrays
// (gpu/search/search_kernels.cu), its copy back to a host Tree (gpu/search/gpu_search.cpp), and
// the bytes a node costs on the device (kTreeNodeBytes).
//
//   X(name, type, root)   root: the field's value at a fresh, unexpanded root
//
// The order is the gathered snapshot's, one section of `budget` entries per field:
//   visits | valueSum | prior | firstChild | parent | lastUsed | childCount | action | virtualLoss
//   the four-byte fields first, so that every section stays aligned whatever the budget.
// Plain C++ (no CUDA, no Qt): nvcc and the host compilers read the same list.
#include <cstddef>
#include <cstdint>

#define CAS_TREE_FIELDS(X)                 \
  X(visits, std::int32_t, 0)               \
  X(valueSum, float, 0.0f)                 \
  X(prior, float, 1.0f)                    \
  X(firstChild, std::int32_t, -1)          \
  X(parent, std::int32_t, -1)              \
  X(lastUsed, std::uint32_t, 0u)           \
  X(childCount, std::int16_t, 0)           \
  X(action, std::int16_t, -1)              \
  X(virtualLoss, std::int16_t, 0)

// The learned-model search's own per-node fields (learned_search.hpp), beside the tree's: arrays
// indexed by the same slots, so they recycle with the tree's blocks. One list for the host
// search (LearnedNodes) and the device twin (gpu/search/learned_steps.cuh).
//
//   X(name, type, width, root)   width: entries per slot, an expression in `stateSize`
//
//   reward[s]                       the model's reward on the edge into s (0 at the root)
//   latent[s * stateSize ..]        the latent state at s, written when s is evaluated (valid
//                                   for the root and every expanded node)
#define CAS_LEARNED_NODE_FIELDS(X) \
  X(reward, float, 1, 0.0f)        \
  X(latent, float, stateSize, 0.0f)

namespace cas::search {

// The fields by name, in the list's order: TreeField::prior, ...
enum class TreeField : int {
#define CAS_TREE_FIELD_ENUM(name, type, root) name,
  CAS_TREE_FIELDS(CAS_TREE_FIELD_ENUM)
#undef CAS_TREE_FIELD_ENUM
};

// One node's bytes over all fields.
inline constexpr std::size_t kTreeNodeBytes = 0
#define CAS_TREE_FIELD_BYTES(name, type, root) +sizeof(type)
    CAS_TREE_FIELDS(CAS_TREE_FIELD_BYTES)
#undef CAS_TREE_FIELD_BYTES
    ;

// Where field `f`'s section starts in a gathered tree of `budget` slots.
constexpr std::size_t gatheredOffset(TreeField f, std::size_t budget) {
  constexpr std::size_t bytes[] = {
#define CAS_TREE_FIELD_SIZE(name, type, root) sizeof(type),
      CAS_TREE_FIELDS(CAS_TREE_FIELD_SIZE)
#undef CAS_TREE_FIELD_SIZE
  };
  std::size_t offset = 0;
  for (int k = 0; k < int(f); ++k) offset += bytes[k] * budget;
  return offset;
}

}  // namespace cas::search
