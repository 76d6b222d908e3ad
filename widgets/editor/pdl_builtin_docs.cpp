#include "widgets/editor/pdl_builtin_docs.hpp"

#include <QFile>
#include <QRegularExpression>

#include <map>

namespace cas::widgets::pdl_builtin_docs {

namespace {

struct Entry {
  QString section;                          // the "###" heading the built-in is under
  QList<std::pair<QString, QString>> facts;  // table column -> cell, after the name column
  QStringList notes;                        // the paragraphs about it after the table
};

// Markdown's inline code and bold as HTML, the rest escaped.
QString inlineHtml(const QString& markdown) {
  static const QRegularExpression code(QStringLiteral("`([^`]*)`"));
  static const QRegularExpression bold(QStringLiteral("\\*\\*([^*]+)\\*\\*"));
  QString html = markdown.toHtmlEscaped();
  html.replace(code, QStringLiteral("<code>\\1</code>"));
  html.replace(bold, QStringLiteral("<b>\\1</b>"));
  return html;
}

QStringList cells(const QString& row) {
  QString inner = row.trimmed();
  if (inner.startsWith(u'|')) inner.remove(0, 1);
  if (inner.endsWith(u'|')) inner.chop(1);
  QStringList out = inner.split(u'|');
  for (QString& c : out) c = c.trimmed();
  return out;
}

// The first name a paragraph is about: its first bold or code span.
QString subjectOf(const QString& paragraph) {
  static const QRegularExpression first(QStringLiteral("\\*\\*([^*]+)\\*\\*|`([A-Za-z_0-9]+)`"));
  const QRegularExpressionMatch m = first.match(paragraph);
  if (!m.hasMatch()) return {};
  return m.captured(1).isEmpty() ? m.captured(2) : m.captured(1);
}

std::map<QString, Entry> parse(const QString& markdown) {
  static const QRegularExpression codeSpan(QStringLiteral("`([A-Za-z_0-9]+)`"));
  std::map<QString, Entry> entries;
  const QStringList lines = markdown.split(u'\n');
  bool inBuiltins = false;
  QString section;
  QStringList header;
  QStringList sectionNames;  // the built-ins of the current section's table
  QString paragraph;
  auto finishParagraph = [&] {
    const QString subject = subjectOf(paragraph);
    if (sectionNames.contains(subject)) entries[subject].notes << paragraph.simplified();
    paragraph.clear();
  };
  for (const QString& line : lines) {
    if (line.startsWith(QLatin1String("## "))) {
      finishParagraph();
      inBuiltins = line.trimmed() == QLatin1String("## Built-ins");
      continue;
    }
    if (!inBuiltins) continue;
    if (line.startsWith(QLatin1String("### "))) {
      finishParagraph();
      section = line.mid(4).trimmed();
      header.clear();
      sectionNames.clear();
      continue;
    }
    if (line.startsWith(u'|')) {
      const QStringList row = cells(line);
      if (header.isEmpty()) {
        header = row;
      } else if (!row.value(0).startsWith(QLatin1String("---"))) {
        for (auto it = codeSpan.globalMatch(row.value(0)); it.hasNext();) {
          const QString name = it.next().captured(1);
          Entry& e = entries[name];
          e.section = section;
          for (int c = 1; c < row.size() && c < header.size(); ++c) e.facts.append({header[c], row[c]});
          sectionNames << name;
        }
      }
      continue;
    }
    // Notes: a bullet starts a paragraph, indented lines continue it, a blank line ends it.
    if (line.trimmed().isEmpty() || line.startsWith(QLatin1String("- "))) finishParagraph();
    if (line.trimmed().isEmpty()) continue;
    if (!paragraph.isEmpty() && !line.startsWith(u' ') && !line.startsWith(QLatin1String("- "))) {
      paragraph += u' ' + line;
      continue;
    }
    paragraph += (paragraph.isEmpty() ? QString() : QStringLiteral(" ")) + (line.startsWith(QLatin1String("- ")) ? line.mid(2) : line.trimmed());
  }
  finishParagraph();
  return entries;
}

const std::map<QString, Entry>& entries() {
  static const std::map<QString, Entry> parsed = parse(referenceMarkdown());
  return parsed;
}

}  // namespace

QString referenceMarkdown() {
  QFile f(QStringLiteral(":/docs/pdl.md"));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

QString documentation(const QString& name) {
  const auto it = entries().find(name);
  if (it == entries().end()) return {};
  const Entry& e = it->second;
  QString html = QStringLiteral("<p><b>%1</b> — %2</p><p>").arg(name.toHtmlEscaped(), e.section.toHtmlEscaped());
  QStringList facts;
  for (const auto& [column, value] : e.facts) facts << QStringLiteral("<i>%1:</i> %2").arg(column.toHtmlEscaped(), inlineHtml(value));
  html += facts.join(QStringLiteral("<br>")) + QStringLiteral("</p>");
  for (const QString& note : e.notes) html += QStringLiteral("<p>%1</p>").arg(inlineHtml(note));
  return html;
}

QStringList documentedNames() {
  QStringList out;
  for (const auto& [name, entry] : entries()) out << name;
  return out;
}

}  // namespace cas::widgets::pdl_builtin_docs
