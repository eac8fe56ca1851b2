// The grid parser (every bad-input case: docs/architecture.md#errors-and-exit-codes), point ids and fingerprints,
// shard assignment and the command-line layer, tested on a small fake experiment.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/errors.hpp"
#include "core/hash.hpp"
#include "runners/grid.hpp"
#include "runners/options.hpp"
#include "runners/point_execution.hpp"
#include "runners/shard_assignment.hpp"

using namespace sharp;
using namespace sharp::runner;

namespace {

class FakeExperiment final : public Experiment {
public:
  std::string name() const override { return "fake"; }
  std::string summary() const override { return "A fake experiment for tests."; }
  std::vector<ParamSpec> parameters() const override {
    return {text_param("logits", "uniform", "law", {"uniform", "one-hot", "two-point"}),
            real_param_at_least("spread", "4", "spread", 0.0),
            real_param_above("theta", "1", "temperature", 0.0),
            integer_param("n", "2^1..2^3", "items", 1),
            integer_param("trials", "1", "trials", 1)};
  }
  void validate(const Point& p) const override {
    if (p.text("logits") == "two-point" && p.integer("n") < 2) throw BadInput("--n: two-point logits need n >= 2");
  }
  std::vector<OutputSpec> outputs() const override { return {}; }
  Record run(const Point&, PointContext&) const override { return {}; }
};

Invocation parse(std::vector<std::string> args) {
  args.insert(args.begin(), "sharp-fake");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  FakeExperiment e;
  return parse_command_line(e, int(argv.size()), argv.data());
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const BadInput& e) {
    return e.what();
  }
  return "";
}

const ParamSpec n_spec = integer_param("n", "1", "items", 1);
const ParamSpec theta_spec = real_param_above("theta", "1", "temperature", 0.0);

}  // namespace

TEST(GridParser, ListsAndPowerRanges) {
  auto v = parse_values(n_spec, "16, 64,1024");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(std::get<std::int64_t>(v[2]), 1024);
  v = parse_values(n_spec, "2^1..2^4");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(std::get<std::int64_t>(v[0]), 2);
  EXPECT_EQ(std::get<std::int64_t>(v[3]), 16);
  v = parse_values(n_spec, "2^30");
  EXPECT_EQ(std::get<std::int64_t>(v[0]), std::int64_t{1} << 30);
  v = parse_values(theta_spec, "2^-2..2^1,3.5");
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(std::get<double>(v[0]), 0.25);
  EXPECT_EQ(std::get<double>(v[4]), 3.5);
}

TEST(GridParser, BadValuesNameTheFlagAndWhatIsAllowed) {
  auto msg = [](const ParamSpec& s, const std::string& text) {
    try {
      parse_values(s, text);
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const char* text : {"0", "-4", "abc", "", " ", "1,,2", "2^5..2^3", "2^a..2^3", "16,16", "1.5", "2^63", "4..8"}) {
    const std::string m = msg(n_spec, text);
    EXPECT_NE(m.find("--n"), std::string::npos) << "input '" << text << "' gave: " << m;
    EXPECT_NE(m.find("allowed"), std::string::npos) << m;
  }
  EXPECT_NE(msg(n_spec, "2^5..2^3").find("reversed"), std::string::npos);
  EXPECT_NE(msg(n_spec, "0").find(">= 1"), std::string::npos);
  for (const char* text : {"0", "-1", "nan", "inf", "x"}) EXPECT_NE(msg(theta_spec, text), "") << text;
  const ParamSpec one = [] { auto p = integer_param("trials", "1", "t", 1); p.list = ListRole::SingleValue; return p; }();
  EXPECT_NE(msg(one, "1,2").find("exactly one"), std::string::npos);
}

TEST(GridParser, InsidePointListIsOneValueCheckedItemByItem) {
  ParamSpec list = text_param("normaliser", "softmax", "normalisers", {"softmax", "adaptive", "sparsemax"});
  list.list = ListRole::InsidePoint;
  for (const char* text : {"softmax,adaptive", "softmax+adaptive", " softmax , adaptive "}) {
    const auto v = parse_values(list, text);
    ASSERT_EQ(v.size(), 1u) << text;
    EXPECT_EQ(std::get<std::string>(v[0]), "softmax+adaptive");
    EXPECT_EQ(in_point_items(std::get<std::string>(v[0])), (std::vector<std::string>{"softmax", "adaptive"}));
  }
  auto msg = [&](const char* text) {
    try {
      parse_values(list, text);
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg("softmax,bogus").find("unknown value 'bogus'"), std::string::npos);
  EXPECT_NE(msg("softmax+softmax").find("repeated"), std::string::npos);
  EXPECT_NE(msg("softmax,,adaptive").find("empty item"), std::string::npos);
  EXPECT_NE(msg("softmax,").find("--normaliser"), std::string::npos);
}

TEST(GridParser, ExpandTurnsOneItemIntoSeveralValuesOrOneClearError) {
  ParamSpec files = text_param("checkpoint", "a.h5", "models", {});
  files.expand = [](const std::string& item) -> std::vector<std::string> {
    if (item == "missing.h5") throw BadInput("cannot be read: no such file");
    if (item.find('#') != std::string::npos) return {item};
    return {item + "#1", item + "#2"};
  };
  const auto v = parse_values(files, "a.h5,b.h5#7");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(std::get<std::string>(v[0]), "a.h5#1");
  EXPECT_EQ(std::get<std::string>(v[1]), "a.h5#2");
  EXPECT_EQ(std::get<std::string>(v[2]), "b.h5#7");
  try {
    parse_values(files, "a.h5,missing.h5");
    FAIL() << "no error";
  } catch (const BadInput& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--checkpoint: 'missing.h5' cannot be read: no such file"), std::string::npos) << m;
  }
  EXPECT_THROW(parse_values(files, "a.h5,a.h5#1"), BadInput);  // a.h5#1 twice
}

// A derived parameter (e.g. eval-max's training normaliser from --checkpoint): computed per point
// from the set values, appended after them, outside the point id and the fingerprint; a failure to
// compute it is bad input naming the parameter and the point.
TEST(GridParser, DerivedParameterIsAFunctionOfThePointOutsideItsId) {
  const ParamSpec law = derived_text_param("law", "the law", "--n", [](const Point& p) -> Value {
    if (p.integer("n") == 13) throw BadInput("no law for 13");
    return p.integer("n") % 2 ? std::string("odd") : std::string("even");
  });
  EXPECT_EQ(law.list, ListRole::Derived);
  const Grid plain("fake", {Axis{n_spec, parse_values(n_spec, "2,3")}});
  const Grid derived("fake", {Axis{n_spec, parse_values(n_spec, "2,3")}}, {law});
  ASSERT_EQ(derived.size(), 2u);
  EXPECT_EQ(derived.points()[0].text("law"), "even");
  EXPECT_EQ(derived.points()[1].text("law"), "odd");
  EXPECT_EQ(derived.points()[1].values.back().first, "law");
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(derived.points()[i].id, plain.points()[i].id);
  EXPECT_EQ(derived.fingerprint(), plain.fingerprint());
  ASSERT_EQ(derived.derived().size(), 1u);
  try {
    Grid("fake", {Axis{n_spec, parse_values(n_spec, "13")}}, {law});
    FAIL() << "no error";
  } catch (const BadInput& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("law of point n=13: no law for 13"), std::string::npos) << m;
  }
  EXPECT_THROW(Grid("fake", {Axis{n_spec, parse_values(n_spec, "2")}}, {n_spec}), std::logic_error);
}

TEST(CommandLine, EveryBadInputOfTheIssueIsOneClearError) {
  EXPECT_NE(error_of({"--n", "0"}).find("--n"), std::string::npos);                  // n < 1
  EXPECT_NE(error_of({"--logits", "two-point", "--n", "1"}).find("n >= 2"), std::string::npos);
  EXPECT_NE(error_of({"--theta", "0"}).find("--theta"), std::string::npos);          // θ <= 0
  EXPECT_NE(error_of({"--theta", "-1"}).find("> 0"), std::string::npos);
  EXPECT_NE(error_of({"--spread", "-0.5"}).find("--spread"), std::string::npos);     // δ < 0
  EXPECT_NE(error_of({"--trials", "0"}).find("--trials"), std::string::npos);        // trials < 1
  EXPECT_NE(error_of({"--n", "2^4..2^2"}).find("reversed"), std::string::npos);      // reversed range
  EXPECT_NE(error_of({"--n", ""}).find("empty"), std::string::npos);                 // empty
  EXPECT_NE(error_of({"--theta", "abc"}).find("not a finite number"), std::string::npos);  // non-number
  EXPECT_NE(error_of({"--logits", "cauchy"}).find("unknown value 'cauchy'"), std::string::npos);
  EXPECT_NE(error_of({"--bogus", "1"}).find("unknown flag"), std::string::npos);
  EXPECT_NE(error_of({"--config", "/nonexistent/sharp.cfg"}).find("--config"), std::string::npos);
  EXPECT_NE(error_of({"--out", "/proc/sharp-test.h5"}).find("--out"), std::string::npos);
  EXPECT_NE(error_of({"--out", "results/x.txt"}).find(".h5"), std::string::npos);
  EXPECT_NE(error_of({"--threads", "0"}).find("--threads"), std::string::npos);
  EXPECT_NE(error_of({"--shard", "2/2"}).find("--shard"), std::string::npos);
  EXPECT_NE(error_of({"--status", "--dry-run"}).find("exclude"), std::string::npos);
}

TEST(CommandLine, ConfigFileGivesValuesAndTheCommandLineWins) {
  const auto dir = std::filesystem::temp_directory_path() / ("sharp-test-cfg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cfg = (dir / "sweep.cfg").string();
  std::ofstream(cfg) << "# a sweep\nn = 2^2..2^3\ntheta = 0.5,1\nlogits = one-hot\n";
  const Invocation inv = parse({"--config", cfg, "--theta", "2", "--dry-run"});
  EXPECT_EQ(inv.grid->size(), 2u);  // n: 4, 8; theta: 2 (command line wins)
  EXPECT_EQ(inv.grid->points()[0].text("logits"), "one-hot");
  EXPECT_EQ(inv.grid->points()[0].real("theta"), 2.0);
  std::ofstream(cfg) << "nonsense = 3\n";
  EXPECT_NE(error_of({"--config", cfg}).find("unknown flag"), std::string::npos);
  std::ofstream(cfg) << "n = 4\nlogits one-hot\n";
  EXPECT_NE(error_of({"--config", cfg}).find("line 2: expected 'key = value'"), std::string::npos);
  // '#' starts a comment at the start of a line or after a blank only: values may hold '#'
  // (FILE.h5#ID); underscores and dashes in keys are alike.
  std::ofstream(cfg) << "#comment\nlogits=one-hot # law\nn = 2^2#3   # not a valid n\n";
  EXPECT_NE(error_of({"--config", cfg}).find("'2^2#3'"), std::string::npos);
  std::ofstream(cfg) << "n = 2^2 # four\ncheckpoint_every = 5\n";
  const Invocation with_comments = parse({"--config", cfg, "--dry-run"});
  EXPECT_EQ(with_comments.grid->points()[0].integer("n"), 4);
  EXPECT_EQ(with_comments.options.checkpoint_every, 5.0);
  std::filesystem::remove_all(dir);
}

TEST(PointIds, StableSensitiveToEveryParameterBlindToThreadsAndOut) {
  const Invocation a = parse({"--n", "16", "--dry-run"});
  const Invocation b = parse({"--n", "16", "--threads", "1", "--out", "/tmp/elsewhere.h5", "--quiet", "--dry-run"});
  ASSERT_EQ(a.grid->size(), 1u);
  EXPECT_EQ(a.grid->points()[0].id, b.grid->points()[0].id);
  EXPECT_EQ(a.grid->fingerprint(), b.grid->fingerprint());
  // A fixed value computed by hand from the documented recipe: ids must never change.
  EXPECT_EQ(a.grid->points()[0].id,
            point_id("fake", {{"seed", std::int64_t{1}}, {"logits", std::string("uniform")}, {"spread", 4.0},
                              {"theta", 1.0}, {"n", std::int64_t{16}}, {"trials", std::int64_t{1}}}));
  std::set<std::string> ids{a.grid->points()[0].id};
  for (auto args : std::vector<std::vector<std::string>>{{"--n", "17"}, {"--theta", "1.0000000000000002"},
                                                          {"--spread", "4.5"}, {"--logits", "one-hot"},
                                                          {"--trials", "2"}, {"--seed", "2"}}) {
    if (args[0] != "--n") args.insert(args.end(), {"--n", "16"});
    args.push_back("--dry-run");
    const Invocation c = parse(args);
    EXPECT_TRUE(ids.insert(c.grid->points()[0].id).second) << args[0];
  }
}

TEST(PointIds, GridIsTheCartesianProductWithUniqueIds) {
  const Invocation inv = parse({"--n", "2^1..2^4", "--theta", "0.5,1,2", "--seed", "1,2", "--dry-run"});
  EXPECT_EQ(inv.grid->size(), 4u * 3u * 2u);
  std::set<std::string> ids;
  for (const Point& p : inv.grid->points()) ids.insert(p.id);
  EXPECT_EQ(ids.size(), inv.grid->size());
  EXPECT_EQ(inv.grid->points()[0].integer("seed"), 1);  // seed varies slowest
  EXPECT_EQ(inv.grid->points().back().integer("seed"), 2);
}

TEST(PointIds, ReorderedListsChangeTheFingerprintNotTheIds) {
  const Invocation a = parse({"--n", "4,8", "--dry-run"});
  const Invocation b = parse({"--n", "8,4", "--dry-run"});
  EXPECT_NE(a.grid->fingerprint(), b.grid->fingerprint());
  EXPECT_EQ(a.grid->points()[0].id, b.grid->points()[1].id);
}

TEST(Canonical, ShortestRoundTrip) {
  EXPECT_EQ(canonical(0.1), "0.1");
  EXPECT_EQ(canonical(1.0), "1");
  EXPECT_EQ(canonical(1e-300), "1e-300");
  EXPECT_EQ(canonical(std::int64_t{1} << 40), "1099511627776");
}

TEST(Shards, DeterministicBalancedAndComplete) {
  std::vector<double> costs = {100, 1, 1, 1, 50, 50, 1, 1};
  const auto owner = assign_shards(costs, 3);
  EXPECT_EQ(owner, assign_shards(costs, 3));
  std::vector<double> load(3, 0);
  for (std::size_t i = 0; i < costs.size(); ++i) load[owner[i]] += costs[i];
  EXPECT_EQ(load[owner[0]], 100);  // the big point alone
  EXPECT_EQ(owner[4] == owner[5], false);
}

TEST(StreamKeys, DependOnDeclaredParametersOnly) {
  const Invocation inv = parse({"--n", "16", "--theta", "0.5,1", "--dry-run"});
  const StreamSpec s{"logits", {"n", "logits"}};
  const auto& pts = inv.grid->points();
  EXPECT_EQ(stream_key("fake", s, pts[0]), stream_key("fake", s, pts[1]));  // θ differs only
  const Invocation other = parse({"--n", "32", "--dry-run"});
  EXPECT_NE(stream_key("fake", s, pts[0]), stream_key("fake", s, other.grid->points()[0]));
  const Invocation seed2 = parse({"--n", "16", "--seed", "2", "--dry-run"});
  EXPECT_NE(stream_key("fake", s, pts[0]), stream_key("fake", s, seed2.grid->points()[0]));
}

TEST(Hashing, CombineHasNoCollisionsOnSmallInputs) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t a = 0; a < 100; ++a)
    for (std::uint64_t b = 0; b < 1000; ++b) seen.insert(sharp::hash_combine(a, b));
  EXPECT_EQ(seen.size(), 100000u);
  EXPECT_NE(sharp::hash_combine(1, 2), sharp::hash_combine(2, 1));
}
