#pragma once
// Pieces of C text the source exporters share (the C export, and the standalone CUDA export's
// host code): literals that read back exactly, identifiers and comments made safe from names
// that come from projects and policies, templates filled by name.
// Thread-safety: pure functions.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cas::exports {

// A float as a C literal that reads back exactly ("0.5f", "NAN", "-HUGE_VALF": <math.h>).
std::string floatLiteral(float v);

// `name` as a C identifier: other characters become '_', and it never starts with a digit.
std::string identifier(const std::string& name);

std::string upper(std::string s);

// `text` with each "{NAME}" replaced by its value, for code written as a template.
std::string filled(std::string text, const std::vector<std::pair<std::string, std::string>>& values);

// Text for a C comment: names come from the project and the policy, and "*/" would end it.
std::string commentText(std::string text);

// `static const float NAME[N] = {...};` of `values`, after a comment saying `what`.
std::string staticArray(const std::string& name, const std::vector<float>& values, const std::string& what);

}  // namespace cas::exports
