#pragma once
// The command line of the stand-alone tools (sharp-normalise, sharp-text-sample): boost's parser,
// except that a word belonging to no flag is bad input (boost would drop it silently: "sharp-normalise
// --normaliser softmax logits.txt" would read stdin), and --help printed through the checked stdout.
#include <boost/program_options.hpp>
#include <sstream>
#include <string>

#include "checked_stdout.hpp"
#include "core/errors.hpp"

namespace sharp::tools {

// `hint` says how the value was meant to be given, e.g. "an input file is given with --input FILE".
inline boost::program_options::parsed_options parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& options, const std::string& hint) {
  namespace po = boost::program_options;
  po::parsed_options parsed = po::command_line_parser(argc, argv).options(options).run();
  for (const po::option& o : parsed.options)
    if (o.position_key >= 0 || o.string_key.empty())
      throw BadInput("unexpected word '" + (o.value.empty() ? std::string() : o.value.front()) +
                     "' on the command line (" + hint + ")");
  return parsed;
}

inline void print_help(const boost::program_options::options_description& options) {
  std::ostringstream help;
  help << options << '\n';
  print_stdout(help.str());
}

}  // namespace sharp::tools
