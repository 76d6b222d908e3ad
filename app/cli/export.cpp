// `cuda-agent export`: a run's (or a project's initial) policy as an ONNX model or as standalone
// C or CUDA source, through core/export's runExport (the studio's File > Export... runs the same), which
// writes nothing unless the whole export succeeds. This file only prints what it did.
#include <algorithm>
#include <iostream>

#include "app/cli/commands.hpp"
#include "core/export/export_job.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"

namespace cas::cli {
namespace {

// The bad-input status of `export`: a usage error's, so that scripts tell a refused export
// (nothing written) from a written one by the status alone.
constexpr int kRefused = 2;

}  // namespace

int runExport(const ExportOptions& o) {
  exports::ExportRequest request;
  request.source = o.dir;
  request.format = o.format == "onnx" ? exports::ExportFormat::Onnx : o.format == "c" ? exports::ExportFormat::C : exports::ExportFormat::Cuda;
  request.checkpoint = o.checkpoint;
  request.batch = o.batch;
  request.opset = o.opset;
  request.out = o.out;
  request.standalone = o.standalone;
  const exports::ExportResult r = exports::runExport(request);
  for (const std::string& s : r.skipped) std::cerr << "warning: skipping checkpoint " << printable(s) << "\n";
  for (const Diagnostic& d : r.notices) std::cerr << formatDiagnostic(d) << "\n";
  if (r.error) {
    std::cerr << formatDiagnostic(*r.error) << "\n";
    return kRefused;
  }
  const std::string written = printable(r.files[0].path.string());
  if (request.format == exports::ExportFormat::Onnx)
    std::cout << "wrote " << written << " (ONNX, opset " << o.opset << ", "
              << (o.batch > 0 ? "batch " + std::to_string(o.batch) : std::string("dynamic batch")) << ", " << formatBytes(r.files[0].bytes) << ")\n";
  else if (request.format == exports::ExportFormat::Cuda)
    std::cout << "wrote " << written << " and " << printable(r.files[1].path.string()) << " (CUDA, at most " << std::max<std::int64_t>(1, o.batch)
              << " observation(s) per call, " << formatBytes(r.files[0].bytes) << "; build with: nvcc -arch=sm_90 -O3 -c " << written << ")\n";
  else
    std::cout << "wrote " << written << " and " << printable(r.files[1].path.string()) << " (C99, " << formatBytes(r.files[0].bytes)
              << "; build with: cc -std=c99 -O2 -c " << written << ", link with -lm)\n";
  std::cout << "from " << printable(r.origin) << ": project " << printable(r.project) << ", iteration " << r.iteration << "\n";
  return 0;
}

}  // namespace cas::cli
