// `cuda-agent export`: a run's (or a project's initial) policy as an ONNX model or as standalone
// C source (core/export). Everything is generated in memory first; only then are the files
// written, each atomically, so a refused export leaves nothing behind.
#include <iostream>

#include "app/cli/commands.hpp"
#include "core/export/c_export.hpp"
#include "core/export/onnx_export.hpp"
#include "core/export/policy_loader.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"

namespace cas::cli {
namespace {

namespace fs = std::filesystem;

// The bad-input status of `export`: a usage error's, so that scripts tell a refused export
// (nothing written) from a written one by the status alone.
constexpr int kRefused = 2;

int refuse(const std::string& message) {
  std::cerr << "error: " << printable(message) << "\n";
  return kRefused;
}

bool write(const fs::path& path, const std::string& bytes, std::string* error) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    *error = "cannot create " + path.parent_path().string() + ": " + ec.message();
    return false;
  }
  return writeFileAtomic(path, bytes, error);
}

}  // namespace

int runExport(const ExportOptions& o) {
  const fs::path defaultFolder = fs::path(o.dir) / "exports";
  fs::path out = o.out.empty() ? defaultFolder / (o.format == "onnx" ? "policy.onnx" : "policy.c") : fs::path(o.out);
  if (o.format == "c" && out.extension() != ".c")
    return refuse("--out " + out.string() + ": the C export is a .c file (its header is written beside it, as .h)");

  exports::LoadedPolicy loaded = exports::loadPolicy(o.dir, o.checkpoint);
  for (const std::string& s : loaded.skipped) std::cerr << "warning: skipping checkpoint " << printable(s) << "\n";
  for (const Diagnostic& d : loaded.notices) std::cerr << formatDiagnostic(d) << "\n";
  if (!loaded.policy) {
    std::cerr << formatDiagnostic(loaded.error) << "\n";
    return kRefused;
  }
  const exports::ExportablePolicy& policy = *loaded.policy;
  std::string error;
  try {
    if (o.format == "onnx") {
      exports::OnnxOptions options;
      options.opset = o.opset;
      options.batch = o.batch;
      const std::string model = exports::exportOnnx(policy, options);
      if (!write(out, model, &error)) return refuse(error);
      std::cout << "wrote " << printable(out.string()) << " (ONNX, opset " << o.opset << ", "
                << (o.batch > 0 ? "batch " + std::to_string(o.batch) : std::string("dynamic batch")) << ", " << formatBytes(model.size()) << ")\n";
    } else {
      fs::path header = out;
      header.replace_extension(".h");
      const exports::CSource source = exports::exportC(policy, header.filename().string());
      if (!write(header, source.header, &error)) return refuse(error);
      if (!write(out, source.source, &error)) {
        fs::remove(header);  // a header without its source is no export
        return refuse(error);
      }
      std::cout << "wrote " << printable(out.string()) << " and " << printable(header.string()) << " (C99, " << formatBytes(source.source.size())
                << "; build with: cc -std=c99 -O2 -c " << printable(out.string()) << ", link with -lm)\n";
    }
  } catch (const exports::ExportError& e) {
    return refuse(e.what());
  }
  std::cout << "from " << printable(loaded.origin) << ": project " << printable(policy.metadata.project) << ", iteration "
            << policy.metadata.iteration << "\n";
  return 0;
}

}  // namespace cas::cli
