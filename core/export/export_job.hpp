#pragma once
// One export from start to end, in each format (ONNX, C, standalone CUDA), as both front ends run it (`cuda-agent export` and the studio's
// File > Export...): the policy loaded from a run or a project (policy_loader.hpp), the model or
// source generated whole in memory, and only then each file written atomically, so that a refused
// export leaves nothing behind.
// Thread-safety: plain functions; runExport may run on any thread (it builds its own CPU backend).
// Two exports to the same file at once are not coordinated: the later rename wins.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/export/onnx_export.hpp"
#include "core/export/policy_loader.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::exports {

enum class ExportFormat { Onnx, C, Cuda };

struct ExportRequest {
  std::filesystem::path source;  // a run folder, a project folder or a standalone .pdl file
  StandaloneShape standalone;    // a .pdl file: its observation shape, action count and seed
  ExportFormat format = ExportFormat::Onnx;
  std::int64_t checkpoint = 0;   // runs: 0 for the newest valid checkpoint, else that iteration's
  std::int64_t batch = 0;        // ONNX: 0 for a dynamic batch, else that batch size; CUDA: 0 for 1, else the most per call
  int opset = kDefaultOnnxOpset;  // ONNX
  std::filesystem::path out;     // empty: defaultExportPath(source, format)
};

struct WrittenFile {
  std::filesystem::path path;
  std::uint64_t bytes = 0;
};

struct ExportResult {
  std::vector<WrittenFile> files;    // the ONNX model, or the .c (.cu) then its .h; empty when refused
  std::string origin;                // where the weights come from (LoadedPolicy::origin)
  std::filesystem::path checkpoint;  // the checkpoint read; empty for a project's initial weights
  std::string project;               // the project's name
  std::int64_t iteration = 0;        // the checkpoint's iteration; 0 for initial weights
  std::vector<std::string> skipped;  // checkpoints passed over, each with the reason
  std::vector<Diagnostic> notices;   // warnings and notes on the way
  std::optional<Diagnostic> error;   // set when the export was refused (then nothing was written)
};

// DIR/exports/policy.onnx, DIR/exports/policy.c (with policy.h beside it) or
// DIR/exports/policy_cuda.cu (with policy_cuda.h); for a .pdl file, exports/STEM.onnx,
// exports/STEM.c or exports/STEM_cuda.cu beside it.
std::filesystem::path defaultExportPath(const std::filesystem::path& source, ExportFormat format);

ExportResult runExport(const ExportRequest& request);

}  // namespace cas::exports
