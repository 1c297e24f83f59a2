#pragma once
// Tables, CSV and JSON for what the lab produced. Field names are snake_case and stable;
// docs/json.md documents them.
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/divergence.hpp"
#include "gallery/registry.hpp"
#include "lab/demos.hpp"
#include "lab/explain.hpp"
#include "lab/profile.hpp"
#include "lab/run.hpp"
#include "nlohmann/json.hpp"

namespace rl::lab {

enum class Format { table, csv, json };
std::optional<Format> parse_format(std::string_view s);

// $COLUMNS, else the terminal's width when stdout is one, else 100.
std::size_t terminal_width();

nlohmann::json to_json(const DeviceInfo& d);
nlohmann::json to_json(const RunReport& r);
nlohmann::json registry_json();

// One line of what the run did: how many rows verified, skipped or failed, and why it does not
// count as a success when it does not.
std::string summary(const RunReport& r);
void print_run(const RunReport& r, Format f, std::ostream& out);
// The table is wrapped to `width` columns (terminal_width() by default); CSV and JSON are whole.
void print_list(Format f, std::ostream& out, std::size_t width = terminal_width());
void print_explain(const ExplainReport& r, Format f, std::ostream& out);
void print_profile(const ProfileReport& r, Format f, std::ostream& out);
void print_demos(const DemoReport& r, Format f, std::ostream& out);
nlohmann::json to_json(const analysis::StepCounts& s);
// `executed`: the count from running boundaryCheck2D on the SIMT backend, when it ran.
void print_divergence(const analysis::DivergenceReport& r, std::optional<std::uint64_t> executed, Format f,
                      std::ostream& out);
std::string device_line(const DeviceInfo& d, double read_ceiling_gbs);

// The writers every report shares. A plain-text table: columns padded to their widest cell; the
// first `left` columns (names) and, with last_left, the last align left, the rest (numbers) right.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 std::ostream& out, std::size_t left = 2, bool last_left = true);
// CSV with RFC 4180 quoting where a cell holds a comma, a quote or a newline.
void print_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
               std::ostream& out);

}  // namespace rl::lab
