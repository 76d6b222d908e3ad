#pragma once
// The PDL reference (docs/pdl.md, embedded in the studio's resources as :/docs/pdl.md) and, read
// from its "Built-ins" section, each built-in's documentation: its table row (arguments, shapes,
// parameters) and the notes that follow the table about it. The editor shows it when the mouse
// rests on a built-in's name; Help > PDL Reference shows the whole document. One source, so the
// hover text cannot drift from the reference.
// Thread-safety: the parsed table is built once, on first use, behind a function-local static
// (thread-safe initialisation); afterwards it is only read.
#include <QString>
#include <QStringList>

namespace cas::widgets::pdl_builtin_docs {

// The whole reference as Markdown; empty if the resource is missing.
QString referenceMarkdown();

// A built-in's documentation as rich text (its name, the section it is in, its row of the
// section's table, its notes); empty when `name` is not a documented built-in.
QString documentation(const QString& name);

// Every built-in the reference documents, sorted.
QStringList documentedNames();

}  // namespace cas::widgets::pdl_builtin_docs
