#include "core/project/project.hpp"

#include <set>

#include <toml++/toml.h>

#include "core/env/environments.hpp"
#include "core/support/atomic_file.hpp"

namespace cas::project {
namespace {

const std::set<std::string> kTopLevelKeys = {"name", "description", "environment", "algorithm", "policy"};

SourceLocation at(const std::string& file, const toml::source_region& r) {
  return {file, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

std::string tomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date or time";
  }
}

// Converts a TOML node into a value of the spec's type; nullopt when the TOML type does not fit.
std::optional<engine::ParamValue> toValue(const engine::ParameterSpec& spec, const toml::node& n) {
  switch (spec.type) {
    case engine::ParamType::Int:
      if (auto v = n.value_exact<std::int64_t>()) return *v;
      return std::nullopt;
    case engine::ParamType::Float:
      if (auto v = n.value_exact<double>()) return *v;
      if (auto v = n.value_exact<std::int64_t>()) return static_cast<double>(*v);
      return std::nullopt;
    case engine::ParamType::Bool:
      if (auto v = n.value_exact<bool>()) return *v;
      return std::nullopt;
    case engine::ParamType::Choice:
      if (auto v = n.value_exact<std::string>()) return *v;
      return std::nullopt;
  }
  return std::nullopt;
}

std::string knownKeys(const std::string& section) {
  std::string out;
  for (const engine::ParameterSpec* s : engine::ParameterRegistry::standard().inSection(section))
    out += (out.empty() ? "" : ", ") + s->key();
  return out;
}

std::string knownEnvironments() {
  std::string out;
  for (const env::EnvironmentInfo& e : env::environments()) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

class Validator {
 public:
  Validator(std::string file, LoadResult& result) : file_(std::move(file)), result_(result) {}

  void run(const toml::table& root, Project& p) {
    const auto& registry = engine::ParameterRegistry::standard();
    std::set<std::string> sections;
    for (const std::string& s : registry.sections()) sections.insert(s);

    for (auto&& [key, node] : root) {
      const std::string k(key.str());
      if (kTopLevelKeys.count(k)) continue;
      if (sections.count(k)) {
        if (!node.is_table()) {
          error(node.source(), "'" + k + "' must be a table ([" + k + "]), got " + tomlTypeName(node));
          continue;
        }
        section(k, *node.as_table(), p);
        continue;
      }
      warning(key.source(), "unknown key '" + k + "' is ignored; known keys: name, description, environment, algorithm, policy, [search], [train], [runtime]");
    }

    p.name = requiredString(root, "name");
    p.environment = requiredString(root, "environment");
    p.algorithm = requiredString(root, "algorithm");
    const std::string policy = requiredString(root, "policy");
    if (auto* d = root.get("description")) {
      if (auto s = d->value_exact<std::string>()) p.description = *s;
      else error(d->source(), "description must be a string, got " + tomlTypeName(*d));
    }
    if (root.contains("name") && p.name.empty() && root.get("name")->is_string())
      error(root.get("name")->source(), "name must not be empty");

    const env::EnvironmentInfo* environment = nullptr;
    if (!p.environment.empty()) {
      environment = env::findEnvironment(p.environment);
      if (!environment)
        error(root.get("environment")->source(), "unknown environment '" + p.environment + "'; known environments: " + knownEnvironments());
    }
    if (!p.algorithm.empty()) {
      const toml::source_region& where = root.get("algorithm")->source();
      if (p.algorithm == "ppo") error(where, "algorithm 'ppo' is not available yet; use 'alphazero'");
      else if (!isKnownAlgorithm(p.algorithm)) error(where, "unknown algorithm '" + p.algorithm + "'; known algorithms: alphazero");
      else if (environment && p.algorithm == "alphazero" && !environment->twoPlayer)
        error(where, "algorithm 'alphazero' needs a two-player board game, but '" + environment->name + "' is a single-agent environment");
    }
    if (!policy.empty()) {
      p.policyFile = p.directory / policy;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p.policyFile, ec))
        error(root.get("policy")->source(), "policy file '" + policy + "' not found in " + p.directory.string());
    }
  }

 private:
  std::string requiredString(const toml::table& root, const char* key) {
    const toml::node* n = root.get(key);
    if (!n) {
      result_.diagnostics.error({file_, 1, 1}, std::string("missing required key '") + key + "'");
      return {};
    }
    if (auto s = n->value_exact<std::string>()) return *s;
    error(n->source(), std::string(key) + " must be a string, got " + tomlTypeName(*n));
    return {};
  }

  void section(const std::string& name, const toml::table& table, Project& p) {
    const auto& registry = engine::ParameterRegistry::standard();
    for (auto&& [key, node] : table) {
      const std::string full = name + "." + std::string(key.str());
      const engine::ParameterSpec* spec = registry.find(full);
      if (!spec) {
        warning(key.source(), "unknown key '" + std::string(key.str()) + "' in [" + name + "] is ignored; known keys: " + knownKeys(name));
        continue;
      }
      auto value = toValue(*spec, node);
      if (!value) {
        error(node.source(), full + " must be " + describeRange(*spec) + ", got " + tomlTypeName(node));
        continue;
      }
      if (auto problem = p.parameters.set(full, *value)) error(node.source(), *problem);
    }
  }

  void error(const toml::source_region& r, std::string message) { result_.diagnostics.error(at(file_, r), std::move(message)); }
  void warning(const toml::source_region& r, std::string message) { result_.diagnostics.warning(at(file_, r), std::move(message)); }

  std::string file_;
  LoadResult& result_;
};

}  // namespace

bool isKnownAlgorithm(const std::string& name) { return name == "alphazero"; }

pdl::CompileResult compilePolicy(const Project& project, std::int64_t batch, std::string* source, bool training) {
  pdl::CompileResult result;
  std::string error;
  auto text = readFile(project.policyFile, &error);
  if (!text) {
    result.diagnostics.error({project.policyFile.string(), 0, 0}, error);
    return result;
  }
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  pdl::CompileOptions options;
  options.fileName = project.policyFile.string();
  options.observationShape.assign(e->observationShape.begin(), e->observationShape.end());
  options.actionCount = e->actionCount;
  options.algorithm = project.algorithm;
  options.batch = batch;
  options.training = training;
  options.seed = std::uint64_t(project.parameters.getInt("runtime.seed"));
  result = pdl::compile(*text, options);
  if (source) *source = std::move(*text);
  return result;
}

LoadResult loadProject(const std::filesystem::path& folderOrFile) {
  LoadResult result;
  Project p;
  std::error_code ec;
  if (std::filesystem::is_directory(folderOrFile, ec)) {
    p.directory = folderOrFile;
    p.projectFile = folderOrFile / kProjectFileName;
  } else {
    p.projectFile = folderOrFile;
    p.directory = folderOrFile.has_parent_path() ? folderOrFile.parent_path() : std::filesystem::path(".");
  }
  const std::string file = p.projectFile.string();

  std::string readError;
  auto text = readFile(p.projectFile, &readError);
  if (!text) {
    result.diagnostics.error({file, 0, 0}, std::filesystem::exists(p.projectFile, ec)
                                               ? readError
                                               : "no project.toml here; a project folder holds project.toml (see docs/project-format.md)");
    return result;
  }
  result.source = *text;

  toml::table root;
  try {
    root = toml::parse(result.source, file);
  } catch (const toml::parse_error& e) {
    result.diagnostics.error(at(file, e.source()), "TOML syntax error: " + std::string(e.description()));
    return result;
  }

  Validator(file, result).run(root, p);
  if (!result.diagnostics.hasErrors()) result.project = std::move(p);
  return result;
}

}  // namespace cas::project
