#include "runners/options.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/errors.hpp"
#include "runners/describe.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace sharp::runner {
namespace {

constexpr int kMaxShards = 100'000;  // more shards than that is a typo, not a cluster job
constexpr std::size_t kMaxOutputName = 200;  // bytes of --out's file name (255 with every suffix)

ParamSpec seed_param() {
  ParamSpec p = integer_param("seed", "1", "base seed(s); a list is a grid axis (replicates)", 0);
  return p;
}

std::string option_name(const ParamSpec& p) { return p.flag().substr(2); }

std::string wrap(const std::string& text, std::size_t indent, std::size_t width) {
  std::istringstream words(text);
  std::string word, out, line;
  while (words >> word) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

std::string make_help(const Experiment& e, const std::vector<ParamSpec>& params) {
  std::ostringstream h;
  h << "usage: sharp-" << e.name() << " [PARAMETERS] [OPTIONS]\n\n" << wrap(e.summary(), 0, 78) << "\n\n";
  h << "Parameters (a list or a range 2^a..2^b forms a grid axis; the grid is their Cartesian product,\n"
    << "at most " << kMaxGridPoints << " points):\n";
  auto row = [&](const std::string& flag, const std::string& text) {
    std::string left = "  " + flag;
    if (left.size() < 24)
      left.append(24 - left.size(), ' ');
    else
      left.append(1, '\n').append(24, ' ');
    h << left << wrap(text, 24, 78) << "\n";
  };
  for (const ParamSpec& p : params) {
    if (p.list == ListRole::Derived) {
      row(p.name + " (no flag)", p.help + " [" + p.allowed + "]");
      continue;
    }
    const bool inside = p.list == ListRole::InsidePoint;
    row(p.flag() + (p.list == ListRole::SingleValue ? " VALUE" : " LIST"),
        p.help + (inside ? " (a list here is evaluated inside each point, not a grid axis)" : "") + " [default " +
            p.default_value + "; " + p.allowed + "]");
  }
  for (OutputKind kind : {OutputKind::Metric, OutputKind::Array}) {
    h << (kind == OutputKind::Metric ? "\nMetrics (columns /points/<name> of the result file, one value per point):\n"
                                     : "\nArrays (/arrays/<point id>/<name>):\n");
    for (const OutputSpec& o : e.outputs()) {
      if (o.kind != kind) continue;
      std::string text = o.type == OutputType::Real ? "real" : "integer";
      if (kind == OutputKind::Array) {
        text += " [";
        for (std::size_t d = 0; d < o.shape.size(); ++d) text += (d ? ", " : "") + o.shape[d];
        text += "]";
      }
      if (!o.unit.empty()) text += ", " + o.unit;
      text += ": " + o.meaning;
      if (!o.items_help.empty()) text += " (" + o.items_help + ")";
      row(o.name, text);
    }
  }
  h << "\nOptions:\n";
  row("--config FILE",
      "read parameters and options from a config file ('n = 2^4..2^10', one per line; '#' starts a comment at the start of a line or after a blank; flags on the command line win)");
  row("--out PATH.h5",
      "merged result file [default results/" + e.name() + ".h5]; finished points go to PATH.h5.parts/");
  row("--threads N", "OpenMP threads of this process [default: all cores]; never changes the data");
  row("--shard I/N",
      "run shard I of N (I from 0, N at most " + std::to_string(kMaxShards) + "; for Slurm arrays) and never merge");
  row("--only NAME=VALUES",
      "run only the grid's points whose parameter NAME takes one of VALUES (e.g. --only "
      "seed=1 for a pilot), into PATH.h5.parts/, and never merge PATH.h5: a later run without --only resumes them");
  row("--only-out FILE.h5",
      "with --only: also merge those points, once all are complete, into a result file of "
      "their own (their sub-grid), e.g. a pilot's models for another experiment to read");
  row("--merge-only", "merge finished point files into PATH.h5 and stop");
  row("--status", "list complete and missing points and stop (exit 0 only when all are complete)");
  row("--dry-run", "print the expanded grid and stop");
  row("--quiet", "no progress output");
  row("--keep-parts", "keep PATH.h5.parts/ after a successful merge");
  row("--overwrite",
      "replace PATH.h5 even when it holds another configuration or is no sharp result, and clear "
      "leftover point files of another configuration");
  row("--break-lock",
      "take the lock PATH.h5.lock (or a shard's) even when it names a run on another host; only "
      "when that run is gone (a holder alive on this host is never broken; docs/architecture.md#locking)");
  row("--checkpoint-every S", "seconds between checkpoints of long points [default 600]");
  row("--describe", "print the parameters and declared outputs as JSON and stop");
  row("--help", "this text");
  h << "\nExit status: 0 done; 1 a point or the run failed (e.g. the disk is full); 2 bad input (nothing written)\n"
       "or --out in use by another run; 3 incomplete (e.g. interrupted by SIGINT/SIGTERM: rerun to resume).\n";
  return h.str();
}

int parse_threads(const std::string& s) {
  int v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1 || v > 4096)
    throw BadInput("--threads: '" + s + "' is not a thread count (allowed: an integer from 1 to 4096)");
  return v;
}

Shard parse_shard(const std::string& s) {
  const auto slash = s.find('/');
  Shard sh;
  auto bad = [&] { throw BadInput("--shard: '" + s + "' is not a shard (allowed: I/N with integers 0 <= I < N)"); };
  if (slash == std::string::npos) bad();
  auto r1 = std::from_chars(s.data(), s.data() + slash, sh.index);
  auto r2 = std::from_chars(s.data() + slash + 1, s.data() + s.size(), sh.count);
  if (r1.ec != std::errc() || r1.ptr != s.data() + slash || r2.ec != std::errc() || r2.ptr != s.data() + s.size() ||
      sh.count < 1 || sh.index < 0 || sh.index >= sh.count)
    bad();
  if (sh.count > kMaxShards)
    throw BadInput("--shard: " + s + " has more shards than the maximum " + std::to_string(kMaxShards));
  return sh;
}

double parse_seconds(const std::string& s) {
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !(v > 0))
    throw BadInput("--checkpoint-every: '" + s + "' is not a duration (allowed: seconds > 0)");
  return v;
}

// The output must be PATH.h5 in a directory we can create or write; checked before anything is
// written so that a bad --out fails with status 2 and no file.
// `writable`: the run will write beside PATH.h5 (not --status, which only reads).
void check_output_path(const std::string& out, bool writable, const std::string& flag = "--out") {
  if (out.size() < 4 || out.substr(out.size() - 3) != ".h5")
    throw BadInput(flag + ": '" + out + "' must name an HDF5 file ending in .h5");
  fs::path p = fs::absolute(out);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw BadInput(flag + ": '" + out + "' is a directory (allowed: a file PATH.h5)");
  // Beside PATH.h5 go PATH.h5.parts/, PATH.h5.parts.deleting/, PATH.h5.shard-I-of-N.lock and
  // temporaries PATH.h5.tmp.<pid>.<n>: all must fit the file system's 255-byte names.
  if (p.filename().string().size() > kMaxOutputName)
    throw BadInput(flag + ": the file name '" + p.filename().string().substr(0, 40) + "...' has " +
                   std::to_string(p.filename().string().size()) + " bytes (allowed: at most " +
                   std::to_string(kMaxOutputName) + ")");
  const fs::path parts = p.string() + ".parts";
  if (fs::exists(fs::symlink_status(parts, ec)) && !fs::is_directory(parts, ec))
    throw BadInput(flag + ": '" + parts.string() + "' exists and is not a directory (the parts of " + out +
                   " go there); move it away or choose another " + flag);
  if (!writable) return;
  fs::path dir = p.parent_path();
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec))
    throw BadInput(flag + ": cannot write '" + out + "': '" + dir.string() + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw BadInput(flag + ": cannot write '" + out + "': directory '" + dir.string() + "' is not writable");
  // Root passes access(); a read-only or pseudo file system does not pass a real probe.
  std::string probe = (dir / (".sharp-probe-" + std::to_string(::getpid()))).string();
  std::ofstream f(probe);
  if (!f) throw BadInput(flag + ": cannot write '" + out + "': cannot create files in '" + dir.string() + "'");
  f.close();
  fs::remove(probe, ec);
}

// Words that belong to no flag ("sharp-bounds --n 16 32", "sharp-bounds stray") would be dropped by
// the parser: refused instead, with how a list is written when the word follows a flag's value.
void refuse_stray_words(const po::parsed_options& parsed, const std::string& experiment) {
  const po::option* previous = nullptr;
  for (const po::option& o : parsed.options) {
    if (o.position_key < 0 && !o.string_key.empty()) {
      previous = &o;
      continue;
    }
    const std::string word = o.value.empty() ? std::string() : o.value.front();
    std::string hint = "; every value belongs to a flag (see sharp-" + experiment + " --help)";
    if (previous && !previous->value.empty())
      hint = "; a list is written with commas and no blanks: --" + previous->string_key + " " +
             previous->value.front() + "," + word;
    throw BadInput("unexpected word '" + word + "' on the command line" + hint);
  }
}

// The whole config file as text: a regular file (or a pipe) of at most 1 MiB, without NUL bytes and
// valid UTF-8. A directory, /dev/zero or a binary file is bad input, not an empty config.
std::string read_config_text(const std::string& file) {
  const std::string what = "--config: cannot read '" + file + "'";
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (ec || !fs::exists(st)) throw BadInput(what + " (allowed: a readable config file, 'key = value' per line)");
  if (!fs::is_regular_file(st) && st.type() != fs::file_type::fifo)
    throw BadInput("--config: '" + file + "' is not a regular file (allowed: a text file, 'key = value' per line)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw BadInput(what + " (allowed: a readable config file, 'key = value' per line)");
  constexpr std::size_t kMaxConfigBytes = 1 << 20;
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  if (in.bad()) throw BadInput(what);
  text.resize(std::size_t(in.gcount()));
  if (text.size() > kMaxConfigBytes)
    throw BadInput("--config: '" + file + "' is larger than 1 MiB (allowed: a text file)");
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') ++line;
    std::size_t extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 9;
    bool ok = c != 0 && extra != 9 && i + extra < text.size();
    for (std::size_t k = 1; ok && k <= extra; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (!ok)
      throw BadInput("--config: '" + file + "' is not a text file (byte " + std::to_string(i) + ", line " +
                     std::to_string(line) + ", is " + (c == 0 ? "NUL" : "not UTF-8") + ")");
    i += extra;
  }
  return text;
}

// A config file: "key = value" per line (key as the flag without dashes; '_' and '-' alike), blank
// lines, and comments from a '#' at the start of a line or after a blank, so that a value may hold
// '#' (FILE.h5#ID). Boost's own reader cuts every line at the first '#', hence this one.
// A comment line "# scale: quick" (or paper, or cluster) names the sweep's scale (root attribute
// "scale"): quick is `make paper`, paper the paper's own sizes, cluster everything beyond them.
std::optional<std::string> scale_line(const std::string& line, const std::string& where) {
  static const std::regex pattern(R"(^[ \t]*#[ \t]*scale[ \t]*:[ \t]*(\S*)[ \t\r]*$)");
  std::smatch m;
  if (!std::regex_match(line, m, pattern)) return std::nullopt;
  const std::string scale = m[1].str();
  if (scale != "quick" && scale != "paper" && scale != "cluster")
    throw BadInput(where + ": scale '" + scale +
                   "' (allowed: '# scale: quick', '# scale: paper' or '# scale: cluster')");
  return scale;
}

po::parsed_options read_config_file(const std::string& file, const po::options_description& desc, std::string& scale) {
  std::istringstream in(read_config_text(file));
  po::parsed_options parsed(&desc);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto s = scale_line(line, "--config " + file + " line " + std::to_string(number))) {
      if (!scale.empty())
        throw BadInput("--config " + file + " line " + std::to_string(number) + ": a second '# scale:' line");
      scale = *s;
      continue;
    }
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
        line.resize(i);
        break;
      }
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto eq = line.find('=');
    const std::string where = "--config " + file + " line " + std::to_string(number);
    if (eq == std::string::npos) throw BadInput(where + ": expected 'key = value', got '" + line.substr(first) + "'");
    auto strip = [](std::string t) {
      const auto a = t.find_first_not_of(" \t\r"), b = t.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : t.substr(a, b - a + 1);
    };
    std::string key = strip(line.substr(0, eq));
    std::replace(key.begin(), key.end(), '_', '-');
    if (!desc.find_nothrow(key, false) || key == "config" || key == "help" || key == "describe")
      throw BadInput(where + ": unknown flag '--" + key + "' (see --help)");
    parsed.options.emplace_back(key, std::vector<std::string>{strip(line.substr(eq + 1))});
  }
  return parsed;
}

}  // namespace

std::string shell_quote_command(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    bool plain = !a.empty() &&
                 a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,^+@%") ==
                     std::string::npos;
    if (!plain) {
      std::string q = "'";
      for (char c : a) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    s += (i ? " " : "") + a;
  }
  return s;
}

Invocation parse_command_line(const Experiment& experiment, int argc, const char* const* argv) {
  std::vector<ParamSpec> params = experiment.parameters();
  params.push_back(seed_param());

  po::options_description desc;
  for (const ParamSpec& p : params)
    if (p.list != ListRole::Derived) desc.add_options()(option_name(p).c_str(), po::value<std::string>());
  desc.add_options()("config", po::value<std::string>())("out", po::value<std::string>())(
      "threads", po::value<std::string>())("shard", po::value<std::string>())("only", po::value<std::string>())(
      "only-out", po::value<std::string>())("checkpoint-every", po::value<std::string>())(
      "merge-only", po::bool_switch())("status", po::bool_switch())("dry-run", po::bool_switch())(
      "quiet", po::bool_switch())("keep-parts", po::bool_switch())("overwrite", po::bool_switch())(
      "break-lock", po::bool_switch())("help,h", po::bool_switch())("describe", po::bool_switch());

  Invocation inv;
  po::variables_map vm;
  std::string scale;  // from the config file's "# scale:" line, if any
  try {
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv)
            .options(desc)
            .style(po::command_line_style::unix_style & ~po::command_line_style::allow_guessing)
            .run();
    refuse_stray_words(parsed, experiment.name());
    po::store(parsed, vm);
    if (vm.count("config"))
      po::store(read_config_file(vm["config"].as<std::string>(), desc, scale), vm);  // command line wins
  } catch (const po::unknown_option& e) {
    throw BadInput("unknown flag '" + e.get_option_name() + "' (see sharp-" + experiment.name() + " --help)");
  } catch (const po::error& e) {
    throw BadInput(std::string(e.what()) + " (see sharp-" + experiment.name() + " --help)");
  }

  check_declarations(experiment.name(), experiment.outputs(), params);
  if (vm["help"].as<bool>()) {
    inv.help = true;
    inv.help_text = make_help(experiment, params);
    return inv;
  }
  if (vm["describe"].as<bool>()) {
    inv.help = true;
    inv.help_text = describe_json(experiment, params);
    return inv;
  }

  RunOptions& o = inv.options;
  o.out = vm.count("out") ? vm["out"].as<std::string>() : "results/" + experiment.name() + ".h5";
  o.threads = vm.count("threads") ? parse_threads(vm["threads"].as<std::string>()) : omp_get_num_procs();
  if (vm.count("shard")) o.shard = parse_shard(vm["shard"].as<std::string>());
  if (vm.count("checkpoint-every")) o.checkpoint_every = parse_seconds(vm["checkpoint-every"].as<std::string>());
  o.merge_only = vm["merge-only"].as<bool>();
  o.status = vm["status"].as<bool>();
  o.dry_run = vm["dry-run"].as<bool>();
  o.quiet = vm["quiet"].as<bool>();
  o.keep_parts = vm["keep-parts"].as<bool>();
  o.overwrite = vm["overwrite"].as<bool>();
  o.break_lock = vm["break-lock"].as<bool>();
  o.command_line = shell_quote_command(argc, argv);
  if (!scale.empty()) o.scale = scale;
  if (int(o.merge_only) + int(o.status) + int(o.dry_run) > 1)
    throw BadInput("--merge-only, --status and --dry-run exclude each other (allowed: at most one)");
  if (o.shard && o.merge_only) throw BadInput("--shard and --merge-only exclude each other (a shard never merges)");
  if (vm.count("only") && (o.shard || o.merge_only))
    throw BadInput("--only excludes --shard and --merge-only (it runs some points and never merges --out)");
  if (vm.count("only-out") && !vm.count("only")) throw BadInput("--only-out needs --only (the points it merges)");

  std::vector<Axis> axes;
  std::vector<ParamSpec> derived;
  // The seed axis first: replicates are the slowest-varying dimension of the grid.
  axes.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[(i + params.size() - 1) % params.size()];
    if (p.list == ListRole::Derived) {
      derived.push_back(p);
      continue;
    }
    const std::string key = option_name(p);
    const std::string text = vm.count(key) ? vm[key].as<std::string>() : p.default_value;
    axes.push_back(Axis{p, parse_values(p, text)});
  }
  checked_grid_size(axes);  // from the axis sizes, before a single point is built
  Grid grid(experiment.name(), std::move(axes), std::move(derived));
  for (const Point& pt : grid.points()) experiment.validate(pt);
  if (vm.count("only")) o.only = parse_point_filter(vm["only"].as<std::string>(), grid);
  if (vm.count("only-out")) {
    o.only_out = vm["only-out"].as<std::string>();
    if (std::filesystem::weakly_canonical(o.only_out) == std::filesystem::weakly_canonical(o.out))
      throw BadInput("--only-out: '" + o.only_out + "' is --out itself (allowed: a file of its own)");
    if (!o.dry_run) check_output_path(o.only_out, !o.status, "--only-out");
  }
  if (!o.dry_run) check_output_path(o.out, !o.status);  // --status reads: a read-only location will do
  inv.grid.emplace(std::move(grid));
  return inv;
}

}  // namespace sharp::runner
