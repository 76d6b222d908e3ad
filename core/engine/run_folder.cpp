#include "core/engine/run_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <toml++/toml.h>

#include "core/support/atomic_file.hpp"

namespace cas::engine {
namespace {

constexpr char kTrailerMagic[8] = {'C', 'A', 'S', 'C', 'K', 'P', 'T', '1'};
constexpr int kKeptCheckpoints = 2;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string tomlValue(const ParameterSpec& spec, const ParamValue& v) {
  if (spec.type == ParamType::Choice) return quoted(std::get<std::string>(v));
  if (spec.type == ParamType::Float) {
    std::string s = formatValue(v);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  return formatValue(v);
}

std::vector<std::filesystem::path> checkpointFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("iter-", 0) == 0 && name.size() > 10 && name.substr(name.size() - 5) == ".ckpt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // zero-padded: name order is iteration order
  return files;
}

}  // namespace

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::optional<RunFolder> RunFolder::create(const std::filesystem::path& dir, const project::Project& p, std::string* error) {
  std::error_code ec;
  if (std::filesystem::exists(dir / "config.toml", ec)) {
    if (error) *error = dir.string() + " already holds a run; use --resume " + dir.string() + " to continue it, or another --out";
    return std::nullopt;
  }
  std::filesystem::create_directories(dir / "checkpoints", ec);
  if (ec) {
    if (error) *error = "cannot create " + dir.string() + ": " + ec.message();
    return std::nullopt;
  }
  std::string text = "# The resolved configuration of this run (written by cuda-agent train).\n";
  text += "project = " + quoted(std::filesystem::absolute(p.directory).lexically_normal().string()) + "\n";
  std::string section;
  for (const ParameterSpec& spec : ParameterRegistry::standard().all()) {
    if (spec.section() != section) {
      section = spec.section();
      text += "\n[" + section + "]\n";
    }
    text += spec.key() + " = " + tomlValue(spec, p.parameters.get(spec.name)) + "\n";
  }
  if (!writeFileAtomic(dir / "config.toml", text, error)) return std::nullopt;
  return RunFolder(dir);
}

std::optional<RunFolder> RunFolder::open(const std::filesystem::path& dir, project::Project* project, std::string* error) {
  const std::filesystem::path config = dir / "config.toml";
  toml::table root;
  try {
    root = toml::parse_file(config.string());
  } catch (const toml::parse_error& e) {
    if (error)
      *error = config.string() + ":" + std::to_string(e.source().begin.line) + ":" + std::to_string(e.source().begin.column) +
               ": error: " + std::string(e.description());
    return std::nullopt;
  } catch (const std::exception&) {
    if (error) *error = dir.string() + " is not a run folder (no readable config.toml)";
    return std::nullopt;
  }
  const auto projectPath = root["project"].value<std::string>();
  if (!projectPath) {
    if (error) *error = config.string() + ": error: 'project' is missing";
    return std::nullopt;
  }
  project::LoadResult loaded = project::loadProject(*projectPath);
  if (!loaded.project) {
    if (error) *error = "the run's project " + *projectPath + " cannot be loaded: " +
                        (loaded.diagnostics.empty() ? std::string("unknown error") : formatHeadline(loaded.diagnostics.items()[0]));
    return std::nullopt;
  }
  for (const ParameterSpec& spec : ParameterRegistry::standard().all()) {
    const toml::node* n = root[spec.section()][spec.key()].node();
    if (!n) continue;
    std::optional<ParamValue> v;
    if (auto i = n->value_exact<std::int64_t>()) v = spec.type == ParamType::Float ? ParamValue(double(*i)) : ParamValue(*i);
    else if (auto d = n->value_exact<double>()) v = *d;
    else if (auto b = n->value_exact<bool>()) v = *b;
    else if (auto s = n->value_exact<std::string>()) v = *s;
    if (!v) continue;
    if (auto problem = loaded.project->parameters.set(spec.name, *v)) {
      if (error) *error = config.string() + ": error: " + *problem;
      return std::nullopt;
    }
  }
  *project = std::move(*loaded.project);
  return RunFolder(dir);
}

bool RunFolder::append(const std::string& file, const std::string& line, std::string* error) {
  const std::string path = (dir_ / file).string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (error) *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  const std::string data = line + "\n";
  const bool ok = ::write(fd, data.data(), data.size()) == ssize_t(data.size());
  ::fsync(fd);
  ::close(fd);
  if (!ok && error) *error = "cannot write " + path;
  return ok;
}

bool RunFolder::appendMetrics(const std::string& jsonLine, std::string* error) { return append("metrics.jsonl", jsonLine, error); }

bool RunFolder::appendChange(std::int64_t iteration, const std::string& parameter, const std::string& from, const std::string& to,
                             std::string* error) {
  return append("changes.jsonl", "{\"iteration\": " + std::to_string(iteration) + ", \"parameter\": " + quoted(parameter) +
                                     ", \"from\": " + quoted(from) + ", \"to\": " + quoted(to) + "}",
                error);
}

bool RunFolder::writeCheckpoint(std::int64_t iteration, const std::string& bytes, std::string* error) {
  char name[64];
  std::snprintf(name, sizeof name, "iter-%08lld.ckpt", static_cast<long long>(iteration));
  std::string data = bytes;
  const std::uint64_t sum = fnv1a64(bytes);
  data.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  data.append(kTrailerMagic, sizeof kTrailerMagic);
  if (!writeFileAtomic(dir_ / "checkpoints" / name, data, error)) return false;
  auto files = checkpointFiles(dir_);
  for (size_t i = 0; i + kKeptCheckpoints < files.size(); ++i) std::filesystem::remove(files[i]);
  return true;
}

int RunFolder::trimMetricsAfter(std::int64_t iteration, std::string* error) {
  auto text = readFile(dir_ / "metrics.jsonl");
  if (!text) return 0;
  std::string kept;
  int dropped = 0;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::string line = text->substr(start, end - start);
    start = end + 1;
    long long it = -1;
    if (line.empty() || std::sscanf(line.c_str(), "{\"iteration\": %lld", &it) != 1 || it > iteration) {
      ++dropped;  // a later iteration, or a line cut short by a crash
      continue;
    }
    kept += line + "\n";
  }
  if (dropped > 0 && !writeFileAtomic(dir_ / "metrics.jsonl", kept, error)) return -1;
  return dropped;
}

std::optional<std::string> RunFolder::newestCheckpoint(std::vector<std::string>* skipped, std::string* chosen) const {
  auto files = checkpointFiles(dir_);
  for (size_t i = files.size(); i-- > 0;) {
    const std::string name = files[i].filename().string();
    std::string readError;
    auto data = readFile(files[i], &readError);
    if (!data) {
      if (skipped) skipped->push_back(name + ": " + readError);
      continue;
    }
    const size_t trailer = sizeof(std::uint64_t) + sizeof kTrailerMagic;
    if (data->size() < trailer || std::memcmp(data->data() + data->size() - sizeof kTrailerMagic, kTrailerMagic, sizeof kTrailerMagic) != 0) {
      if (skipped) skipped->push_back(name + ": truncated (no checksum trailer)");
      continue;
    }
    std::uint64_t sum;
    std::memcpy(&sum, data->data() + data->size() - trailer, sizeof sum);
    data->resize(data->size() - trailer);
    if (fnv1a64(*data) != sum) {
      if (skipped) skipped->push_back(name + ": checksum mismatch (the file is corrupted)");
      continue;
    }
    if (chosen) *chosen = name;
    return data;
  }
  return std::nullopt;
}

}  // namespace cas::engine
