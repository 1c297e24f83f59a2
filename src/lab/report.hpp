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
#include "lab/littles_law.hpp"
#include "lab/profile.hpp"
#include "lab/run.hpp"
#include "nlohmann/json.hpp"

namespace rl::lab {

enum class Format { table, csv, json };
std::optional<Format> parse_format(std::string_view s);

// $COLUMNS, else the terminal's width when stdout is one, else 100.
std::size_t terminal_width();

nlohmann::json to_json(const DeviceInfo& d);
// The fields every command's JSON opens with: "command", "device", "params" (every flag value
// that reproduces the output, defaults resolved) and "reducelab_version".
nlohmann::json command_json(std::string_view command, nlohmann::json device, nlohmann::json params);
// `run`'s params: the plan as flags (kernels, n, block, dtype, op, accumulate, param, repeats,
// seed, hot, no_ceiling) and the backend it ran on.
nlohmann::json plan_params(const Plan& p, Backend backend);
nlohmann::json to_json(const RunReport& r);
// `list --format json`; `device`: what --backend picked.
nlohmann::json registry_json(const DeviceInfo& device);
// The gallery as a Markdown table (`list --format markdown`): README.md and docs/gallery.md hold
// it between <!-- gallery:begin --> and <!-- gallery:end -->.
std::string gallery_markdown();

// One line of what the run did: how many rows verified, skipped or failed, and why it does not
// count as a success when it does not.
std::string summary(const RunReport& r);
void print_run(const RunReport& r, Format f, std::ostream& out);
// The table is wrapped to `width` columns (terminal_width() by default); CSV and JSON are whole.
// JSON needs the device --backend picked.
void print_list(Format f, std::ostream& out, std::size_t width = terminal_width(), const DeviceInfo* device = nullptr);
void print_explain(const ExplainReport& r, Format f, std::ostream& out);
void print_profile(const ProfileReport& r, Format f, std::ostream& out);
// `reducelab littles-law`: the table as Markdown (table), CSV, or JSON.
void print_littles_law(const LittlesReport& r, Format f, std::ostream& out);
void print_demos(const DemoReport& r, Format f, std::ostream& out);
nlohmann::json to_json(const analysis::StepCounts& s);
// `executed`: the count from running boundaryCheck2D on the SIMT backend, when it ran; `device`:
// that backend (named in the JSON).
void print_divergence(const analysis::DivergenceReport& r, std::optional<std::uint64_t> executed, Format f,
                      std::ostream& out, const DeviceInfo& device);
std::string device_line(const DeviceInfo& d, double read_ceiling_gbs);

// The writers every report shares. A plain-text table: columns padded to their widest cell; the
// first `left` columns (names) and, with last_left, the last align left, the rest (numbers) right.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 std::ostream& out, std::size_t left = 2, bool last_left = true);
// CSV with RFC 4180 quoting where a cell holds a comma, a quote or a newline.
void print_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
               std::ostream& out);

}  // namespace rl::lab
