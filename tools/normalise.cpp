// sharp-normalise: a small Unix filter over the normaliser family (docs/science.md#remedies). Reads rows of
// whitespace-separated logits (one distribution per line; -inf marks a masked entry), writes the
// probabilities in the same layout with 17 significant digits, or with --entropy one line per row:
// the entropy (nats) of the output and, where the normaliser's temperature needs the entropy pass
// (adaptive), the beta it used. --list prints the registered normalisers (lib/normalisers/registry.hpp):
// as text, or as the markdown tables of docs/science.md#remedies and #learned-scalars.
// Bad input (a non-numeric token, NaN, +inf, an empty or fully masked row, a bad spec) gets one line
// on stderr naming the line/column or the parameter, exit status 2, and nothing written: all input
// is read and checked first, and --output goes through a temporary file renamed into place. A write
// that fails (a full disk, /dev/full, a closed stdout) is exit status 1 naming it (checked_stdout.hpp).
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "checked_stdout.hpp"
#include "core/errors.hpp"
#include "core/simd_isa.hpp"
#include "normalisers/input_rows.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/registry.hpp"
#include "tool_command_line.hpp"

namespace {

namespace po = boost::program_options;
using sharp::BadInput;

struct Rows {
  std::vector<double> values;  // all rows back to back
  std::vector<std::size_t> offsets;  // row r is values[offsets[r] .. offsets[r+1])
  std::vector<std::size_t> lines;  // 1-based input line of row r
};

std::string read_all(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A token as a message shows it: at most 40 bytes, with its length when cut (a bad token may be
// megabytes long).
std::string shown(std::string_view token) {
  if (token.size() <= 40) return "'" + std::string(token) + "'";
  return "'" + std::string(token.substr(0, 40)) + "...' (" + std::to_string(token.size()) + " bytes)";
}

// Parses one token; "-inf" (any case, also "-infinity") is a masked entry. A number whose magnitude
// is below the smallest subnormal (1e-400) underflows to 0, as in any floating-point reading; one
// above the largest double (1e400) is an error.
double parse_token(std::string_view token, std::size_t line, std::size_t column) {
  double x = 0.0;
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, x);
  const std::string where = "line " + std::to_string(line) + ", column " + std::to_string(column);
  if (ec == std::errc::result_out_of_range && ptr == last) {
    // from_chars leaves x unset out of range: strtod says which way (0 or a subnormal, or ±HUGE_VAL).
    const std::string text(first, last);
    x = std::strtod(text.c_str(), nullptr);
    if (std::isinf(x))
      throw BadInput(where + ": " + shown(token) +
                     " is beyond the largest double (allowed: finite numbers, "
                     "-inf for a masked entry)");
    return x;
  }
  if (ec != std::errc() || ptr != last) {
    throw BadInput(where + ": " + shown(token) + " is not a number");
  }
  if (auto problem = sharp::norm::logit_problem(x)) throw BadInput(where + ": " + *problem);
  return x;
}

// Lines end with \n, \r\n or a lone \r (old Mac files, some spreadsheet exports); each row is then
// checked as every front end checks rows (normalisers/input_rows.hpp). What editors add is accepted:
// a UTF-8 byte order mark at the start, blank lines after the last row (a blank line before a row is
// still an empty row: it would shift every later row's place; so is an input of blank lines only).
Rows parse_rows(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const std::size_t last = text.find_last_not_of(" \t\r\n\v\f");
  if (last != std::string_view::npos) text = text.substr(0, last + 1);
  Rows rows;
  rows.offsets.push_back(0);
  std::size_t line = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string::npos) end = text.size();
    const std::size_t next = end + ((end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n') ? 2 : 1);
    std::string_view row(text.data() + pos, end - pos);
    ++line;
    std::size_t column = 0;
    std::size_t i = 0;
    while (i < row.size()) {
      while (i < row.size() && std::isspace(static_cast<unsigned char>(row[i]))) ++i;
      if (i == row.size()) break;
      std::size_t j = i;
      while (j < row.size() && !std::isspace(static_cast<unsigned char>(row[j]))) ++j;
      const double x = parse_token(row.substr(i, j - i), line, ++column);
      rows.values.push_back(x);
      i = j;
    }
    sharp::norm::check_input_row(rows.values.data() + rows.offsets.back(), rows.values.size() - rows.offsets.back(),
                                 line);
    rows.offsets.push_back(rows.values.size());
    rows.lines.push_back(line);
    pos = next;
  }
  return rows;
}

void append_number(std::string& out, double x) {
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 17);
  out.append(buf, res.ptr);
}

// Runs the normaliser over maximal runs of consecutive rows of equal length (one batched call each,
// so rows run in parallel), then formats the output.
std::string normalise(const sharp::norm::Normaliser& nz, const Rows& rows, bool entropy_only) {
  std::vector<double> p(rows.values.size());
  const std::size_t count = rows.lines.size();
  for (std::size_t r = 0; r < count;) {
    const std::size_t n = rows.offsets[r + 1] - rows.offsets[r];
    std::size_t end = r + 1;
    while (end < count && rows.offsets[end + 1] - rows.offsets[end] == n) ++end;
    try {
      nz.forward(rows.values.data() + rows.offsets[r], p.data() + rows.offsets[r], end - r, n);
    } catch (const sharp::NumericError& e) {
      throw sharp::NumericError(std::string(e.what()) + " (the batch starts at input line " +
                                std::to_string(rows.lines[r]) + ")");
    }
    r = end;
  }
  const sharp::norm::Temperature* temperature = nz.temperature();
  const bool row_beta = temperature && temperature->needs_entropy_pass();
  std::string out;
  out.reserve(rows.values.size() * 24);
  for (std::size_t r = 0; r < count; ++r) {
    const std::size_t first = rows.offsets[r], n = rows.offsets[r + 1] - first;
    if (entropy_only) {
      append_number(out, sharp::norm::entropy(p.data() + first, n));
      if (row_beta) {
        out += ' ';
        append_number(out, sharp::norm::row_beta(*temperature, rows.values.data() + first, n));
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        if (i) out += ' ';
        append_number(out, p[first + i]);
      }
    }
    out += '\n';
  }
  return out;
}

// --output's directory exists (bad input otherwise, said before any work): a missing one would fail
// only at the write, as "cannot create" without the reason.
void check_output_directory(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) return;
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status))
    throw BadInput("--output '" + path + "': the directory '" + dir.string() +
                   "' does not exist (create it, or "
                   "write elsewhere)");
  if (!std::filesystem::is_directory(status))
    throw BadInput("--output '" + path + "': '" + dir.string() + "' is not a directory");
}

// Writes `text` to `path` atomically: a temporary file in the same directory, renamed over `path`.
void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot create '" + temp + "': " + std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      const int err = errno;
      std::filesystem::remove(temp);
      throw std::runtime_error("cannot write '" + temp + "': " + std::strerror(err));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp);
    throw std::runtime_error("cannot rename '" + temp + "' to '" + path + "': " + ec.message());
  }
}

// Examples with parameters, for --help: "softmax:beta=2, ssmax:s=0.43, ...".
std::string examples() {
  std::string s;
  for (const sharp::norm::NormaliserEntry* e : sharp::norm::normaliser_entries())
    if (!e->parameters.empty()) s += (s.empty() ? "" : ", ") + e->example;
  return s;
}

std::string shortest(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

// "beta > 0, default 1" / "s > 0, required".
std::string parameter_text(const sharp::norm::ParameterInfo& p) {
  return p.range.text(p.key) + (p.default_value ? ", default " + shortest(*p.default_value) : ", required");
}

// --list: every registered normaliser, its parameters (range, default, meaning), aliases and
// learnable parameters, one block each.
std::string list_text() {
  std::string out;
  for (const sharp::norm::NormaliserEntry* e : sharp::norm::normaliser_entries()) {
    out += e->name + ": " + e->formula + " (docs/science.md#" + e->section + "), e.g. " + e->example + "\n";
    for (const auto& p : e->parameters) out += "  " + p.key + ": " + parameter_text(p) + "; " + p.meaning + "\n";
    for (const auto& a : e->aliases) out += "  " + a.key + ": " + a.range.text(a.key) + ", sets " + a.target + "\n";
    for (const auto& l : e->learnable)
      out += "  " + l.key + "=learn" + (l.per_query() ? " (per query)" : "") + ": " + l.parameterisation + ", start " +
             l.start + "\n";
  }
  return out;
}

// --list markdown: the table of docs/science.md#remedies. --list markdown-learnable: the table of
// docs/science.md#learned-scalars. (scripts/normaliser_tables.py writes them into the docs.)
std::string list_markdown() {
  std::string out =
      "| normaliser | computes | parameters | learnable |\n"
      "|---|---|---|---|\n";
  for (const sharp::norm::NormaliserEntry* e : sharp::norm::normaliser_entries()) {
    std::string params, learnable;
    for (const auto& p : e->parameters)
      params.append(params.empty() ? "`" : "; `").append(parameter_text(p)).append("`");
    for (const auto& a : e->aliases)
      params.append(" (or `").append(a.range.text(a.key)).append("`, sets ").append(a.target).append(")");
    for (const auto& l : e->learnable)
      learnable.append(learnable.empty() ? "`" : ", `")
          .append(l.key)
          .append("=learn`")
          .append(l.per_query() ? " per query" : "");
    out += "| [`" + e->name + "`](#" + e->section + ") | " + e->formula + " | " + (params.empty() ? "—" : params) +
           " | " + (learnable.empty() ? "—" : learnable) + " |\n";
  }
  return out;
}

std::string list_markdown_learnable() {
  std::string out =
      "| scalar | parameterisation | initial value |\n"
      "|---|---|---|\n";
  for (const sharp::norm::NormaliserEntry* e : sharp::norm::normaliser_entries())
    for (const auto& l : e->learnable)
      out += "| `" + e->name + ":" + l.key + "=learn` | " + l.parameterisation + " | " + l.start + " |\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec_text, input, output, list_format;
  bool entropy_only = false;
  po::options_description options(
      "Usage: sharp-normalise --normaliser NORMALISER [--input FILE] [--output FILE] [--entropy]\n"
      "Each input line is one row of whitespace-separated logits (-inf = masked entry); lines end with\n"
      "LF, CR LF or CR; a UTF-8 byte order mark and blank lines after the last row are ignored.\n"
      "A logit below the smallest double in magnitude (1e-400) underflows to 0 (or a subnormal); one\n"
      "beyond the largest double (1e400), and a row spanning more than it, is an error.\n"
      "Writes the probabilities, same layout, 17 significant digits.\n"
      "NORMALISER: name[:key=value...] with name one of " +
      sharp::norm::normaliser_names_text() +
      ",\n"
      "e.g. " +
      examples() + "\n(docs/science.md#remedies; --list for their parameters).\nOptions");
  options.add_options()("normaliser", po::value(&spec_text), "normaliser spec (required unless --list)")(
      "input", po::value(&input), "input file (default: stdin)")("output", po::value(&output),
                                                                 "output file (default: stdout); written atomically")(
      "entropy", po::bool_switch(&entropy_only),
      "write per row the entropy (nats) of the output instead, followed by the beta used for adaptive")(
      "list", po::value(&list_format)->implicit_value("text"),
      "print the registered normalisers and stop: text (default), markdown or markdown-learnable")("help", "this help");
  try {
    po::variables_map vm;
    po::store(sharp::tools::parse_command_line(argc, argv, options, "an input file is given with --input FILE"), vm);
    if (vm.count("help")) {
      sharp::tools::print_help(options);
      return 0;
    }
    po::notify(vm);
    if (vm.count("list")) {
      if (list_format == "text")
        sharp::tools::print_stdout(list_text());
      else if (list_format == "markdown")
        sharp::tools::print_stdout(list_markdown());
      else if (list_format == "markdown-learnable")
        sharp::tools::print_stdout(list_markdown_learnable());
      else
        throw BadInput("--list " + list_format + ": unknown format (allowed: text, markdown, markdown-learnable)");
      return 0;
    }
    if (spec_text.empty())
      throw BadInput("--normaliser is required (a spec such as softmax or entmax:alpha=1.5; see --help)");
    sharp::active_simd_isa();  // a bad SHARP_SIMD is bad input (core/simd_isa.hpp)
    const auto nz = sharp::norm::make_normaliser(spec_text);
    if (!output.empty() && output != "-") check_output_directory(output);

    std::string text;
    if (input.empty() || input == "-") {
      text = read_all(std::cin);
    } else {
      std::ifstream in(input, std::ios::binary);
      if (!in) throw BadInput("cannot open input file '" + input + "'");
      text = read_all(in);
    }
    const std::string result = normalise(*nz, parse_rows(text), entropy_only);
    if (output.empty() || output == "-") {
      sharp::tools::print_stdout(result);
    } else {
      write_file_atomically(output, result);
    }
    return 0;
  } catch (const BadInput& e) {
    std::cerr << "sharp-normalise: " << e.what() << "\n";
    return 2;
  } catch (const po::error& e) {
    std::cerr << "sharp-normalise: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sharp-normalise: " << e.what() << "\n";
    return 1;
  }
}
