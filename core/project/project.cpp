#include "core/project/project.hpp"

#include <cstdio>
#include <set>
#include <unistd.h>

#include <toml++/toml.h>

#include "core/env/environments.hpp"
#include "core/env/trading.hpp"
#include "core/params/parameter_toml.hpp"
#include "core/params/run_params.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"
#include "core/support/toml_parse.hpp"

namespace cas::project {
namespace {

const std::set<std::string> kTopLevelKeys = {"name", "description", "environment", "algorithm", "policy", "series"};
// Unknown keys warned about one by one; the rest are counted in one more warning, so a file of
// 80,000 stray keys gives a screenful.
constexpr int kMaxUnknownKeyWarnings = 10;

using params::tomlTypeName;

SourceLocation at(const std::string& file, std::string_view text, const toml::source_region& r) { return tomlLocation(file, text, r.begin); }

std::string knownKeys(const std::string& section) {
  std::string out;
  for (const params::ParameterSpec* s : params::ParameterRegistry::standard().inSection(section))
    out += (out.empty() ? "" : ", ") + s->key();
  return out;
}

// "[search], [train], [ppo], [trading], [runtime], [dist]": the registry's sections.
std::string knownSections() {
  std::string out;
  for (const std::string& s : params::ParameterRegistry::standard().sections()) out += (out.empty() ? "[" : ", [") + s + "]";
  return out;
}

std::string ppoEnvironments() {
  std::string out;
  for (const env::EnvironmentInfo& e : env::environments())
    if (e.singleAgent) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

// MuZero's: single-agent environments without a price series (its self-play has no series).
std::string muZeroEnvironments() {
  std::string out;
  for (const env::EnvironmentInfo& e : env::environments())
    if (e.singleAgent && !e.needsSeries) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

std::string knownEnvironments() {
  std::string out;
  for (const env::EnvironmentInfo& e : env::environments()) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

// Whether `inner` is `folder` or lies inside it; both are canonical (symlinks resolved).
bool isInside(const std::filesystem::path& inner, const std::filesystem::path& folder) {
  auto i = inner.begin();
  for (auto f = folder.begin(); f != folder.end(); ++f, ++i)
    if (i == inner.end() || *i != *f) return false;
  return true;
}

class Validator {
 public:
  Validator(std::string file, LoadResult& result, const LoadOptions& options) : file_(std::move(file)), result_(result), options_(options) {}

  void run(const toml::table& root, Project& p) {
    const auto& registry = params::ParameterRegistry::standard();
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
      unknownKey(key.source(), "unknown key " + quoteValue(k) + " is ignored; known keys: name, description, environment, algorithm, policy, series, " + knownSections());
    }
    if (unknownKeys_ > kMaxUnknownKeyWarnings)
      result_.diagnostics.warning(firstUnwarned_, std::to_string(unknownKeys_ - kMaxUnknownKeyWarnings) + " more unknown keys are ignored");

    p.name = requiredString(root, "name");
    p.environment = requiredString(root, "environment");
    p.algorithm = requiredString(root, "algorithm");
    const std::string policy = requiredString(root, "policy");
    if (auto* d = root.get("description")) {
      if (auto s = d->value_exact<std::string>()) p.description = *s;
      else error(d->source(), "description must be a string, got " + tomlTypeName(*d));
    }
    // A name of only spaces names no run folder a user can tell apart ("runs/   -STAMP").
    if (root.contains("name") && root.get("name")->is_string() && p.name.find_first_not_of(" \t") == std::string::npos)
      error(root.get("name")->source(), p.name.empty() ? "name must not be empty" : "name must not be only spaces");

    const env::EnvironmentInfo* environment = nullptr;
    if (!p.environment.empty()) {
      environment = env::findEnvironment(p.environment);
      if (!environment)
        error(root.get("environment")->source(), "unknown environment " + quoteValue(p.environment) + "; known environments: " + knownEnvironments());
    }
    if (!p.algorithm.empty()) {
      const toml::source_region& where = root.get("algorithm")->source();
      if (!isKnownAlgorithm(p.algorithm)) error(where, "unknown algorithm " + quoteValue(p.algorithm) + "; known algorithms: alphazero, ppo, muzero");
      else if (environment && p.algorithm == "alphazero" && !environment->twoPlayer)
        error(where, "algorithm 'alphazero' needs a two-player board game, but '" + environment->name + "' is a single-agent environment");
      else if (environment && p.algorithm == "ppo" && environment->twoPlayer)
        error(where, "algorithm 'ppo' needs a single-agent environment, but '" + environment->name + "' is a two-player board game; use 'alphazero'");
      else if (environment && p.algorithm == "ppo" && !environment->singleAgent)
        error(where, "algorithm 'ppo' cannot step '" + environment->name + "' yet; it trains on: " + ppoEnvironments());
      else if (environment && p.algorithm == "muzero" && (!environment->singleAgent || environment->needsSeries))
        error(where, "algorithm 'muzero' needs a single-agent environment without a price series, but '" + environment->name +
                         "' is not one; it trains on: " + muZeroEnvironments());
    }
    if (const toml::node* where = root.get("policy"); where && where->is_string()) policyFile(where->source(), policy, p);
    if (environment) seriesFile(root, *environment, p);
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
    const auto& registry = params::ParameterRegistry::standard();
    for (auto&& [key, node] : table) {
      const std::string full = name + "." + std::string(key.str());
      const params::ParameterSpec* spec = registry.find(full);
      if (!spec) {
        unknownKey(key.source(), "unknown key " + quoteValue(key.str()) + " in [" + name + "] is ignored; known keys: " + knownKeys(name));
        continue;
      }
      std::string problem;
      if (auto value = params::valueFromToml(*spec, node, &problem, result_.source)) p.parameters.set(full, *value);
      else error(node.source(), problem);
    }
  }

  // A file the project names (the policy, the price series) must be a regular file in the
  // project folder (symlinks resolved), unless the user allowed others
  // (LoadOptions::allowOutsidePaths): a project from elsewhere must not make the tools read, echo
  // or offer to save /etc/shadow. `copy` replaces it (a run folder's copy). Empty when refused.
  struct NamedFile {
    const char* key;    // "policy"
    const char* noun;   // "the policy's .pdl file"
    const char* keep;   // "the policy"
    const FileLimit& limit;
  };
  std::filesystem::path namedFile(const toml::source_region& where, const NamedFile& kind, const std::string& value, const Project& p,
                                  const std::optional<std::filesystem::path>& copy) {
    const std::string key = kind.key;
    if (value.empty()) {
      error(where, key + " must name " + kind.noun + ", relative to the project folder; it is empty");
      return {};
    }
    const std::filesystem::path file = copy ? *copy : p.directory / value;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      error(where, key + " file '" + value + "' not found in " + p.directory.string());
      return {};
    }
    if (!copy && !options_.allowOutsidePaths) {
      std::error_code folderError, fileError;
      const auto folder = std::filesystem::canonical(p.directory, folderError);
      const auto resolved = std::filesystem::canonical(file, fileError);
      if (folderError || fileError || !isInside(resolved, folder)) {
        const bool sameAsGiven = fileError || resolved == std::filesystem::path(value);
        error(where, key + " '" + value + "' is outside the project folder" + (sameAsGiven ? std::string() : " (it resolves to " + resolved.string() + ")") +
                         "; keep " + kind.keep + " in the project folder, or pass --allow-outside-project to allow it");
        return {};
      }
    }
    std::string notRegular;
    const int fd = openRegularFile(file, kind.limit, &notRegular);
    if (fd < 0) {
      error(where, notRegular);
      return {};
    }
    ::close(fd);
    return file;
  }

  void policyFile(const toml::source_region& where, const std::string& policy, Project& p) {
    p.policyFile = options_.policyFile ? *options_.policyFile : p.directory / policy;
    namedFile(where, {"policy", "the policy's .pdl file", "the policy", kPolicyFileLimit}, policy, p, options_.policyFile);
  }

  // A trading environment's price series: named (`series`), in the folder, and read whole, so a
  // bad row is an error at its file:line now rather than a failed run later.
  void seriesFile(const toml::table& root, const env::EnvironmentInfo& environment, Project& p) {
    const toml::node* n = root.get("series");
    if (!environment.needsSeries) {
      if (n) warning(n->source(), "series is ignored: '" + environment.name + "' reads no price series");
      return;
    }
    if (!n) {
      result_.diagnostics.error({file_, 1, 1}, "missing required key 'series': '" + environment.name +
                                                   "' trades over a price series; name its CSV file, relative to the project folder (series = \"prices.csv\")");
      return;
    }
    const auto value = n->value_exact<std::string>();
    if (!value) return error(n->source(), "series must be a string, got " + tomlTypeName(*n));
    p.seriesFile = namedFile(n->source(), {"series", "the price series' CSV file", "the price series", kSeriesFileLimit}, *value, p, options_.seriesFile);
    if (p.seriesFile.empty()) return;
    const double fraction = p.parameters.getFloat("trading.train_fraction");
    try {
      auto series = std::make_shared<env::PriceSeries>(env::readPriceSeries(p.seriesFile.string(), env::splitNeed(fraction, env::stocksSetup())));
      if (auto problem = env::splitProblem(series->size(), fraction, env::stocksSetup())) return error(n->source(), p.seriesFile.string() + ": " + *problem);
      p.series = std::move(series);
    } catch (const env::PriceSeriesError& e) {
      error(n->source(), e.what());
    }
  }

  void unknownKey(const toml::source_region& r, std::string message) {
    if (++unknownKeys_ <= kMaxUnknownKeyWarnings) warning(r, std::move(message));
    else if (unknownKeys_ == kMaxUnknownKeyWarnings + 1) firstUnwarned_ = at(file_, result_.source, r);
  }

  void error(const toml::source_region& r, std::string message) { result_.diagnostics.error(at(file_, result_.source, r), std::move(message)); }
  void warning(const toml::source_region& r, std::string message) { result_.diagnostics.warning(at(file_, result_.source, r), std::move(message)); }

  std::string file_;
  LoadResult& result_;
  const LoadOptions& options_;
  int unknownKeys_ = 0;
  SourceLocation firstUnwarned_;
};

}  // namespace

env::EnvironmentData environmentData(const Project& project) {
  const bool equity = project.parameters.getChoice("trading.reward") == "equity";
  return {project.series, project.parameters.getFloat("trading.train_fraction"),
          equity ? env::TradingReward::Equity : env::TradingReward::PriceChange};
}

bool isKnownAlgorithm(const std::string& name) { return name == "alphazero" || name == "ppo" || name == "muzero"; }

pdl::CompileOptions policyCompileOptions(const Project& project, std::int64_t batch, bool training) {
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  pdl::CompileOptions options;
  options.fileName = project.policyFile.string();
  options.observationShape.assign(e->observationShape.begin(), e->observationShape.end());
  options.actionCount = e->actionCount;
  options.algorithm = project.algorithm;
  options.batch = batch;
  options.training = training;
  options.seed = std::uint64_t(params::readRuntimeParams(project.parameters).seed);
  return options;
}

pdl::CompileResult compilePolicy(const Project& project, std::int64_t batch, std::string* source, bool training) {
  pdl::CompileResult result;
  std::string error;
  auto text = readFile(project.policyFile, kPolicyFileLimit, &error);
  if (!text) {
    result.diagnostics.error({}, error);  // it names the file
    return result;
  }
  result = pdl::compile(*text, policyCompileOptions(project, batch, training));
  if (source) *source = std::move(*text);
  return result;
}

LoadResult loadProject(const std::filesystem::path& folderOrFile, const LoadOptions& options) {
  LoadResult result;
  Project p;
  std::error_code ec;
  // Named for what they are: a missing path was "no project.toml here", and a file such as
  // p/policy.pdl was read as TOML (its first line a "TOML syntax error").
  const auto kind = std::filesystem::status(folderOrFile, ec).type();
  if (kind == std::filesystem::file_type::not_found) {
    result.diagnostics.error({}, folderOrFile.string() + " does not exist; give a project folder (one holding project.toml)");
    return result;
  }
  if (kind == std::filesystem::file_type::regular && folderOrFile.extension() != ".toml") {
    result.diagnostics.error({}, folderOrFile.string() + " is a file, not a project folder; give the folder that holds project.toml");
    return result;
  }
  if (std::filesystem::is_directory(folderOrFile, ec)) {
    p.directory = folderOrFile;
    p.projectFile = folderOrFile / kProjectFileName;
  } else {
    p.projectFile = folderOrFile;
    p.directory = folderOrFile.has_parent_path() ? folderOrFile.parent_path() : std::filesystem::path(".");
  }
  const std::string file = p.projectFile.string();

  std::string readError;
  auto text = readFile(p.projectFile, kProjectFileLimit, &readError);
  if (!text) {
    // readError names the file itself.
    if (std::filesystem::exists(p.projectFile, ec)) result.diagnostics.error({}, readError);
    else result.diagnostics.error({file, 0, 0}, "no project.toml here; a project folder holds project.toml (see docs/project-format.md)");
    return result;
  }
  result.source = *text;
  p.text = *text;

  toml::table root;
  try {
    root = parseToml(result.source, file);
  } catch (const toml::parse_error& e) {
    result.diagnostics.error(at(file, result.source, e.source()), "TOML syntax error: " + std::string(e.description()));
    return result;
  }

  Validator(file, result, options).run(root, p);
  if (!result.diagnostics.hasErrors()) result.project = std::move(p);
  return result;
}

std::optional<std::string> folderNameProblem(std::string_view name) {
  if (name.empty()) return "a name must not be empty";
  if (name.find_first_not_of(" \t") == std::string_view::npos) return "a name must not be only spaces";
  // A separator or ".." would put the folder elsewhere than where it is made ("runs/../../x").
  if (name.find_first_of("/\\") != std::string_view::npos) return "a name must not hold '/' or '\\'";
  if (name == "." || name == "..") return "a name must not be '.' or '..'";
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool c1 = c == 0xC2 && i + 1 < name.size() && (static_cast<unsigned char>(name[i + 1]) & 0xE0) == 0x80;  // U+0080..U+009F
    if (c < 0x20 || c == 0x7F || c1) return "a name must not hold control characters";
    // U+202E and its kind reorder or hide what is shown of a name ("evil\u202etxt.exe").
    if (const char32_t f = formatCharacterAt(name, i)) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(f));
      return std::string("a name must not hold invisible formatting or text direction characters (it holds ") + code + ")";
    }
  }
  if (name.size() > 100) return "a name must be at most 100 bytes";
  return std::nullopt;
}

}  // namespace cas::project
