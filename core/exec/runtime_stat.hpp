#pragma once
// One line of a compiled program's or a device search's runtime statistics (runtimeStats():
// memory pool, kernel cache, graph capture). The value is kept as an English template and its
// arguments, so that the CLI prints value() as it is and the studio translates the template
// before filling it in. Where a backend writes a line, its name and template are marked with
// QT_TRANSLATE_NOOP("cas::RuntimeStats", ...) for the studio's catalogue (the identity here:
// lupdate reads the token in the source text).
// Thread-safety: a plain value.
#include <string>
#include <string_view>
#include <vector>

#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(scope, x) x  // as Qt spells it, so that a later Qt header redefines it identically
#endif

namespace cas::exec {

// `format` with each %1..%9 replaced by args[N-1], in one pass, so that an argument holding
// "%1" (a path, an error message) is left as it is; a % followed by anything else, or by a
// number with no argument, stays.
std::string fillPlaceholders(std::string_view format, const std::vector<std::string>& args);

struct RuntimeStat {
  std::string name;               // "pool device allocations": also the key reports look up
  std::string format;             // "%1 hits, %2 compiled": English, translated by the studio
  std::vector<std::string> args;  // numbers, sizes, paths, error texts: shown as they are
  std::string value() const { return fillPlaceholders(format, args); }
};

// The value of the line named `name`; empty when there is none.
std::string statValue(const std::vector<RuntimeStat>& stats, std::string_view name);

}  // namespace cas::exec
