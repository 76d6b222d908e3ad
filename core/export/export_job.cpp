#include "core/export/export_job.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>

#include "core/engine/run_folder.hpp"
#include "core/export/c_export.hpp"
#include "core/export/c_text.hpp"
#include "core/export/policy_loader.hpp"
#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"
#include "core/cuda_render/standalone_export.hpp"

namespace cas::exports {
namespace {

namespace fs = std::filesystem;

Diagnostic refusal(std::string message) { return {Severity::Error, {}, std::move(message), {}}; }

// The folders an export made for its files, deepest first: removed again (when still empty)
// when the export fails, so that a refused export leaves nothing behind.
struct MadeFolders {
  std::vector<fs::path> folders;
  void removeEmpty() const {
    std::error_code ignored;
    for (const fs::path& folder : folders) fs::remove(folder, ignored);  // only an empty one
  }
};

// Why `folder` could not be made: a part of its path that exists and is no folder (a file, a
// FIFO), named with what it is, or the system's reason.
std::string cannotMakeFolder(const fs::path& folder, const std::error_code& cause) {
  if (auto notFolder = notAFolder(folder)) return *notFolder + "; the export is written into a folder there: move it away, or export to another path";
  std::string message = "cannot create " + folder.string() + ": " + cause.message();
  if (cause == std::errc::permission_denied || cause == std::errc::operation_not_permitted || cause == std::errc::read_only_file_system)
    message += "; give yourself write access to " + folder.parent_path().string() + ", or export elsewhere with --out (nothing was changed)";
  return message;
}

// Writes the files of one export, which all lie in one folder, made when missing: all of them or
// none (writeFilesAtomic), the folders made for them removed again when they cannot be written.
bool write(const std::vector<std::pair<fs::path, std::string_view>>& files, std::string* error, MadeFolders& made) {
  const fs::path folder = files.front().first.parent_path();
  std::error_code ec;
  for (const auto& file : files)  // "newdir/" where nothing is: named before a folder is made for it
    if (!file.first.has_filename() && !fs::exists(fs::symlink_status(file.first, ec))) {
      *error = file.first.string() + " names a folder (it ends in '/'), not a file; give the path of a file to write, without the trailing '/'";
      return false;
    }
  for (fs::path& missing : missingFolders(folder)) made.folders.push_back(std::move(missing));
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec) *error = cannotMakeFolder(folder, ec);
  if (ec || !writeFilesAtomic(files, error)) {
    made.removeEmpty();
    return false;
  }
  return true;
}

// Binds the two files of a C or CUDA export: the header defines GUARD_EXPORT_ID, a hash of the
// pair, which the source checks before anything else. The pair becomes visible in two renames; a
// kill between them leaves the new header beside the old source, which then stops with #error
// instead of compiling against another network's buffer sizes.
void pairFiles(CSource& files, const std::string& headerName, const std::string& sourceName) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (const std::string* part : {&files.header, &files.source})
    for (unsigned char c : *part) hash = (hash ^ c) * 1099511628211ull;
  char id[32];
  std::snprintf(id, sizeof id, "0x%016llxULL", static_cast<unsigned long long>(hash));
  const std::string macro = upper(identifier(headerName)) + "_EXPORT_ID";
  const std::string include = "#include \"" + headerName + "\"\n";
  const size_t includeAt = files.source.find(include), guardEnd = files.header.rfind("#endif");
  if (includeAt == std::string::npos || guardEnd == std::string::npos)
    throw ExportError("the generated source does not include " + headerName + " as expected; this is a bug in cuda-agent");
  auto plain = [](std::string name) {  // a file name inside the #error's string literal
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    return name;
  };
  files.source.insert(includeAt + include.size(), "#if !defined(" + macro + ") || " + macro + " != " + id + "\n#error \"" + plain(headerName) +
                                                      " is not the header " + plain(sourceName) + " was exported with; export both again\"\n#endif\n");
  files.header.insert(guardEnd, "/* Identifies this export's pair of files: the source checks it. */\n#define " + macro + " " + id + "\n\n");
}

// Whether `file` lies in `folder` (both absolute and normalised).
bool isInside(const fs::path& folder, const fs::path& file) {
  return std::mismatch(folder.begin(), folder.end(), file.begin(), file.end()).first == folder.end();
}

// Why `out` may not be written, when `source` is a run: it would replace one of the run's own
// files (a checkpoint, a log, its settings or policy copy), or it lies in the run's exports/
// through a symbolic link (exports/ itself or a folder in it: the export, or the removal of its
// header, would act on another folder's files). nullopt otherwise; a path elsewhere is the user's.
std::optional<std::string> runFilesRefusal(const fs::path& source, const fs::path& out) {
  if (policySourceOf(source) != PolicySource::Run) return std::nullopt;
  std::error_code ec;
  const fs::path run = fs::weakly_canonical(fs::absolute(source, ec), ec), file = fs::weakly_canonical(fs::absolute(out, ec), ec);
  static const char* const kRunFiles[] = {"metrics.jsonl", "changes.jsonl", "config.toml", "policy.pdl", "project.toml", "series.csv", "lock"};
  const bool ownFile = file.parent_path() == run && std::find(std::begin(kRunFiles), std::end(kRunFiles), file.filename().string()) != std::end(kRunFiles);
  if (ownFile || isInside(run / "checkpoints", file))
    return out.string() + " is one of the run's own files (its checkpoints, logs and settings); export to " + (source / "exports").string() +
           "/ or outside the run";
  if (std::optional<std::string> problem = engine::linkedRunFolder(source, "exports"))
    return isInside(fs::absolute(source / "exports", ec).lexically_normal(), fs::absolute(out, ec).lexically_normal()) ? problem : std::nullopt;
  const fs::path exports = fs::absolute(source / "exports", ec).lexically_normal(), target = fs::absolute(out, ec).lexically_normal();
  if (!isInside(exports, target)) return std::nullopt;
  fs::path folder = exports;
  for (auto part = std::next(target.begin(), std::distance(exports.begin(), exports.end())); part != target.end() && std::next(part) != target.end(); ++part) {
    folder /= *part;
    if (fs::is_symlink(fs::symlink_status(folder, ec)))
      return folder.string() + " is a symbolic link inside the run's exports/; export to a folder of the run's own, or to a path outside the run";
  }
  return std::nullopt;
}

// Whether `a` and `b` are one file (by identity: a link or another spelling of the path counts).
bool sameFile(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

// Why `out` may not be written, when `source` is a project or a standalone .pdl: it is one of
// the files the export reads (project.toml and the project's policy file; the .pdl itself), which
// the export would replace with its output (a C or CUDA export's header beside `out` too).
// Compared by identity, so that a link or another spelling of the path is caught. nullopt otherwise.
std::optional<std::string> sourceFilesRefusal(const fs::path& source, const fs::path& out, ExportFormat format) {
  fs::path header = out;
  header.replace_extension(".h");
  const std::vector<fs::path> outs = format == ExportFormat::Onnx ? std::vector<fs::path>{out} : std::vector<fs::path>{out, header};
  const PolicySource kind = policySourceOf(source);
  std::vector<fs::path> own;
  if (kind == PolicySource::PdlFile) own.push_back(source);
  if (kind == PolicySource::Project) {
    own.push_back(source / "project.toml");
    project::LoadResult loaded = project::loadProject(source);  // errors are reported by the export's own load
    if (loaded.project) own.push_back(loaded.project->policyFile);
  }
  for (const fs::path& written : outs)
    for (const fs::path& file : own)
      if (sameFile(written, file))
        return written.string() + " is " + (kind == PolicySource::PdlFile ? "the policy file being exported" : "one of the project's own files (" + file.filename().string() + ")") +
               "; the export would replace it: export to another path (nothing was changed)";
  return std::nullopt;
}

// Why `out`'s name does not fit the format: a C export is a .c file, a CUDA export a .cu file,
// and an ONNX model is not written under a source file's name (x.c took the model silently).
std::optional<std::string> extensionRefusal(ExportFormat format, const fs::path& out) {
  const fs::path ending = out.extension();
  if (format == ExportFormat::C && ending != ".c") return out.string() + ": the C export is a .c file (its header is written beside it, as .h)";
  if (format == ExportFormat::Cuda && ending != ".cu") return out.string() + ": the CUDA export is a .cu file (its header is written beside it, as .h)";
  if (format == ExportFormat::Onnx && (ending == ".c" || ending == ".cu" || ending == ".h"))
    return out.string() + ": the ONNX export (the default format) is a model, not source code; give --format c or --format cuda for source, or name the "
           "model .onnx";
  return std::nullopt;
}

// A C or CUDA export: the header and the source (paired by pairFiles), into `result`'s files;
// false with `result.error` when either cannot be written (then the previous pair, if any, is
// left as it was).
bool writeSourcePair(const ExportRequest& request, const ExportablePolicy& policy, const fs::path& out, ExportResult& result) {
  fs::path header = out;
  header.replace_extension(".h");
  CSource source = request.format == ExportFormat::C ? exportC(policy, header.filename().string())
                                                     : gpu::exportCuda(policy, std::max<std::int64_t>(1, request.batch), header.filename().string());
  pairFiles(source, header.filename().string(), out.filename().string());
  std::string error;
  MadeFolders made;
  // Both written beside their destinations before either replaces one: a full disk or a source
  // that may not be replaced leaves the previous pair as it was.
  if (!write({{header, source.header}, {out, source.source}}, &error, made)) {
    result.error = refusal(error);
    return false;
  }
  result.files = {{out, source.source.size()}, {header, source.header.size()}};
  return true;
}

}  // namespace

fs::path defaultExportPath(const fs::path& source, ExportFormat format) {
  // The CUDA files take their own name: their header would replace the C export's policy.h.
  const std::string ending = format == ExportFormat::Onnx ? ".onnx" : format == ExportFormat::C ? ".c" : "_cuda.cu";
  if (policySourceOf(source) == PolicySource::PdlFile) return source.parent_path() / "exports" / (source.stem().string() + ending);
  return source / "exports" / ("policy" + ending);
}

ExportResult runExport(const ExportRequest& request) {
  ExportResult result;
  const fs::path out = request.out.empty() ? defaultExportPath(request.source, request.format) : request.out;
  if (auto up = upAfterName(out)) {
    result.error = refusal(*up);
    return result;
  }
  if (auto linked = runFilesRefusal(request.source, out)) {
    result.error = refusal(*linked);
    return result;
  }
  if (auto own = sourceFilesRefusal(request.source, out, request.format)) {
    result.error = refusal(*own);
    return result;
  }
  if (auto misnamed = extensionRefusal(request.format, out)) {
    result.error = refusal(*misnamed);
    return result;
  }
  const bool standalone = policySourceOf(request.source) == PolicySource::PdlFile;
  if (standalone && request.checkpoint > 0) {
    result.error = refusal(request.source.string() + " is a standalone PDL file, which has no checkpoints; --checkpoint goes with a run folder");
    return result;
  }
  LoadedPolicy loaded = standalone ? loadPolicyFile(request.source, request.standalone) : loadPolicy(request.source, request.checkpoint);
  result.skipped = std::move(loaded.skipped);
  result.notices = std::move(loaded.notices);
  if (!loaded.policy) {
    result.error = std::move(loaded.error);
    return result;
  }
  const ExportablePolicy& policy = *loaded.policy;
  result.origin = std::move(loaded.origin);
  result.checkpoint = std::move(loaded.checkpoint);
  result.project = policy.metadata.project;
  result.iteration = policy.metadata.iteration;
  std::string error;
  try {
    if (request.format == ExportFormat::Onnx) {
      OnnxOptions options;
      options.opset = request.opset;
      options.batch = request.batch;
      const std::string model = exportOnnx(policy, options);
      MadeFolders made;
      if (!write({{out, model}}, &error, made)) {
        result.error = refusal(error);
        return result;
      }
      result.files.push_back({out, model.size()});
    } else if (!writeSourcePair(request, policy, out, result)) {
      return result;
    }
  } catch (const ExportError& e) {
    result.error = refusal(e.what());
  }
  return result;
}

}  // namespace cas::exports
