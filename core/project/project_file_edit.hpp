#pragma once
// Writing tuning values into project.toml's text (the studio's "Write to project.toml"): each
// parameter's line is replaced in place, or added at the end of its section (the section is added
// when missing), and everything else (comments, order, spacing) stays as the user wrote it. The
// result is parsed again and each value read back before it is returned, so a text that would
// no longer load is never produced.
// Thread-safety: plain functions.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/params/parameters.hpp"

namespace cas::project {

// A value as project.toml writes it: a choice quoted, a float with a decimal point.
std::string tomlValueText(const params::ParameterSpec& spec, const params::ParamValue& value);

struct ParameterAssignment {
  std::string name;  // "search.c_puct"
  params::ParamValue value;
};

// `text` with every assignment made; nullopt with `error` (naming the parameter, or the TOML
// problem) when a name is unknown or the result would not read back.
std::optional<std::string> withParameterValues(std::string_view text, const std::vector<ParameterAssignment>& assignments, std::string* error);

}  // namespace cas::project
