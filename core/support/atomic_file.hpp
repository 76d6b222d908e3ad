#pragma once
// Bounded whole-file reads and atomic writes (temp file in the same folder, fsync, rename, fsync of
// the folder), so a
// crash never leaves a half-written project, config or checkpoint behind, and no file that comes
// from elsewhere (a symlink to /dev/zero, a FIFO, a sparse 50 GB file) can block a read or exhaust
// memory: every reader names what the file is for and the most it may hold.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cas {

// What a file is read as, and the most it may hold. docs/robustness.md lists the limits.
struct FileLimit {
  const char* what;  // "a project file": completes "... the 1.0 MiB <what> may hold"
  std::uint64_t maxBytes;
};

inline constexpr FileLimit kProjectFileLimit{"a project file", 1u << 20};
inline constexpr FileLimit kPolicyFileLimit{"a policy", 1u << 20};  // pdl::kMaxSourceBytes
inline constexpr FileLimit kSeriesFileLimit{"a price series", 64u << 20};  // env::PriceSeriesLimits::maxFileBytes
inline constexpr FileLimit kRunConfigLimit{"a run's config.toml", 1u << 20};
inline constexpr FileLimit kRunLogLimit{"a run's metrics or change log", 256u << 20};
inline constexpr FileLimit kPositionsFileLimit{"a positions file", 16u << 20};
inline constexpr FileLimit kEditorFileLimit{"a file opened in the editor", 16u << 20};
inline constexpr FileLimit kKernelCacheFileLimit{"a kernel cache entry", 256u << 20};

enum class OpenFor {
  Reading,    // symlinks followed (to a regular file)
  ReadingInPlace,  // never through a symlink: a run folder's own files, which must not lead out of it
  Appending,  // read-write, appending, created when missing; never through a symlink, so a run
              // folder from elsewhere cannot make a log append to (or truncate) ~/.bashrc
};

// Opens `path` when it is a regular file; a FIFO cannot block the open. Returns the descriptor,
// or -1 with `error` filled ("P is a named pipe (FIFO), not a regular file; <what> must be a
// regular file").
int openRegularFile(const std::filesystem::path& path, const FileLimit& limit, std::string* error, OpenFor mode = OpenFor::Reading);

// Why `path` may not name a file or folder to be written: a ".." after the name of a folder that
// does not exist (runs/x/.. without runs/x). Checks made before writing would look at runs/x/..
// as it is then (nothing), while the writes, once x is made, land in runs/x's parent: a folder the
// checks never saw (a project's, the user's). nullopt otherwise (../runs/x, or runs/x/.. with x
// there: the checks resolve it as the writes will).
std::optional<std::string> upAfterName(const std::filesystem::path& path);

// Reads the whole of a regular file of at most limit.maxBytes bytes; a larger file is refused
// before any of it is read. nullopt (and `error` filled) when it cannot be read.
std::optional<std::string> readFile(const std::filesystem::path& path, const FileLimit& limit, std::string* error = nullptr,
                                    OpenFor mode = OpenFor::Reading);
// The same, from a descriptor openRegularFile returned (left open), from its current offset.
std::optional<std::string> readAll(int fd, const std::filesystem::path& path, const FileLimit& limit, std::string* error);

// The folders on the way to `folder` (itself included) that do not exist yet, deepest first:
// what create_directories(folder) makes, and what to remove again, each when still empty, when
// the write they were made for is given up.
std::vector<std::filesystem::path> missingFolders(const std::filesystem::path& folder);

// Why `folder` cannot be (or be made) a folder: it, or the first part of its path that exists,
// is no folder ("P is a named pipe (FIFO), not a folder", "P is a symbolic link to nothing, not a
// folder"). nullopt when it is a folder, or could be made one.
std::optional<std::string> notAFolder(const std::filesystem::path& folder);

// What a file of st_mode `mode` is, for messages: "a folder", "a named pipe (FIFO)", "a socket".
const char* fileTypeName(unsigned mode);

// "512 bytes", "1.0 MiB", "50.0 GiB".
std::string formatBytes(std::uint64_t bytes);

// Writes `data` to `path` atomically: what everything the product writes goes through. A new
// temporary file beside it (O_EXCL | O_NOFOLLOW: a file or link planted at its name is never
// opened), written, synced, renamed over `path`, and the folder synced. A destination that exists
// and is not a regular file (a FIFO, a device such as /dev/null, a folder, or a symbolic link to
// one of them) is refused and left as it is; a symbolic link to a regular file is itself
// replaced, never written through. Returns false with `error` filled on failure; the previous
// file, if any, is untouched then.
bool writeFileAtomic(const std::filesystem::path& path, std::string_view data, std::string* error = nullptr);

// Writes files that belong together (a C export's .c and .h) as writeFileAtomic writes one, all
// or none: every file is written and synced beside its destination first, and only when all of
// them are are they renamed over their destinations, one after another. A failure before the
// renames (a full disk, a destination that may not be replaced) leaves every destination as it
// was and no temporary file; false with `error` then.
bool writeFilesAtomic(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files, std::string* error = nullptr);

// Whether `fileName` is the temporary file of a writeFileAtomic that was interrupted (killed
// between creating it and renaming it): "iter-00000003.ckpt.tmp.4242".
bool isInterruptedWrite(std::string_view fileName);

}  // namespace cas
