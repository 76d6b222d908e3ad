#pragma once
// The one way the project parses TOML text (project.toml, a run's config.toml, the values of
// --set). toml++ 3.3.0, the version Debian ships, reaches __builtin_unreachable() when it
// classifies some non-ASCII characters as whitespace or not (marzer/tomlplusplus issues 190 and
// 295, fixed upstream in pull request 305): after a bare key ("-ύ = 1"), between tokens, inside an
// unquoted value (where a quote starts no string: 'seed = 1"ҋ"'), and in a multi-line basic string
// after a backslash. Such text is refused here first, at its line and
// column, with a toml::parse_error like the parser's own, so no input reaches that code. So is
// text that is not UTF-8 (toml++ names the character before the bad byte).
// Everywhere else toml::parse is used as it is.
// Thread-safety: plain function.
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "core/support/diagnostic.hpp"

namespace cas {

// toml::parse(text, source), after the check above; throws toml::parse_error either way.
toml::table parseToml(std::string_view text, std::string source);

// The byte offset in `text` of a position toml++ gives (it counts a line's columns in
// characters); npos when the text has no such line.
size_t tomlOffset(std::string_view text, toml::source_position at);

// A diagnostic's location for that position: its column in bytes, as every diagnostic counts
// them, so the caret stands under the character named in a line with non-ASCII text before it.
SourceLocation tomlLocation(const std::string& file, std::string_view text, toml::source_position at);

}  // namespace cas
