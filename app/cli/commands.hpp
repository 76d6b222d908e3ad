#pragma once
// The CLI's subcommands. Each returns the process exit status: 0 success, 1 the input was
// rejected (diagnostics printed), 2 a usage error.
#include <string>
#include <vector>

namespace cas::cli {

int runDevices();
int runCheck(const std::vector<std::string>& paths);
int runParams(bool markdown);

}  // namespace cas::cli
