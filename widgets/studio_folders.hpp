#pragma once
// Where the folders that ship with the studio are (the example projects, the documentation):
// next to an installed binary, above a build tree, or in the source tree this binary was built
// from, the first of them that exists.
// Thread-safety: reads the file system and QCoreApplication's path; call from any thread once
// the application object exists.
#include <QString>

namespace cas::widgets {

// The absolute path of the shipped folder `name` ("projects", "docs"); empty when none is found.
QString bundledFolder(const QString& name);

}  // namespace cas::widgets
