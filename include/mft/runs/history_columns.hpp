#pragma once
// The columns of a training run's /history (FORMAT.md), declared once: each
// column's name, when a run has it, what it means and how the progress line
// prints it. The run file creates, reopens and checks the columns from this
// table and records their order in /history.columns (for the readers); the
// progress line, its heading and the JSON log's rows are printed from it.
// Adding a column: a line of the table, and its value in the row the
// training loop fills.
#include <map>
#include <string>
#include <vector>

namespace mft {

// What decides which columns a run has.
struct HistoryShape {
  bool classifies = false;  // the loss classifies: accuracies
  bool minibatches = false; // steps on minibatches (or online data): the batch's risk
  bool held_out = false;    // held-out sequences: their risk (and accuracy)
  bool ntk = false;         // ntk.every > 0: K_V's extreme eigenvalues
};

struct HistoryColumn {
  const char *name; // /history/<name>
  // Whether a run of this shape has the column; null: every run has it.
  bool (*present)(const HistoryShape &);
  const char *when; // `present` in words, for the format's reference ("" for every run)
  const char *meaning;
  // The progress line: the heading, right-aligned over a value of `width`
  // characters printed by `format` ("" for a column it does not show).
  const char *heading;
  int width;
  const char *format;
  bool logged; // in the JSON log's row events
};

// Every column, in the order of the file and the progress line; `step`
// (int64) first, the others float64.
const std::vector<HistoryColumn> &history_columns();

// The columns a run of `shape` has, step included, in table order.
std::vector<const HistoryColumn *> history_columns_of(const HistoryShape &shape);

// The column named `name`, or null.
const HistoryColumn *find_history_column(const std::string &name);

// One row's values by column name (step as a double); a column without a
// value reads NaN.
using HistoryValues = std::map<std::string, double>;

// The progress line's heading and one row of it: the shown columns of
// `columns` in order, each " " + its value in its format (NaN for none).
std::string history_heading(const std::vector<const HistoryColumn *> &columns);
std::string history_line(const std::vector<const HistoryColumn *> &columns, const HistoryValues &row);

} // namespace mft
