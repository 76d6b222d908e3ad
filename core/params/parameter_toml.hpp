#pragma once
// The one conversion of a value into a tuning parameter's value. project.toml's [search], [train]
// and [runtime] sections, a run's config.toml, and the text given to --set or typed in the
// studio's tuning panel (read as a TOML value, see parseValue) all go through valueFromToml, so
// a value is accepted in one place exactly when it is accepted in the others (`subtree_reuse = 1`
// is refused everywhere, `true` accepted everywhere).
// Thread-safety: plain functions.
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "core/params/parameters.hpp"

namespace cas::params {

// "a string", "an integer", "a number", "a boolean", "a table", "an array", "a date or time".
std::string tomlTypeName(const toml::node& node);

// The node as a value of the spec's type (an integer is a valid number), range-checked. nullopt
// with `error` filled ("search.simulations must be an integer in [1, 100000], got a number", or
// checkValue's sentence) otherwise. `document`, the text the node was parsed from, lets an
// out-of-range value be quoted as it was written ("c_puct = 1e3 is out of range").
std::optional<ParamValue> valueFromToml(const ParameterSpec& spec, const toml::node& node, std::string* error, std::string_view document = {});

}  // namespace cas::params
