#include "bench/ncu_csv.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench {
namespace {

// Factor from a printed unit to its base unit.
double UnitScale(const std::string& unit) {
  static const auto* scales = new std::map<std::string, double>{
      {"Kbyte", 1e3},    {"Mbyte", 1e6},   {"Gbyte", 1e9},   {"KB", 1e3},
      {"MB", 1e6},       {"GB", 1e9},      {"usecond", 1e3}, {"msecond", 1e6},
      {"second", 1e9},   {"us", 1e3},      {"ms", 1e6},      {"Kcycle", 1e3},
      {"Mcycle", 1e6},   {"Ksector", 1e3}, {"Msector", 1e6}, {"Krequest", 1e3},
      {"Mrequest", 1e6}, {"Kinst", 1e3},   {"Minst", 1e6},
  };
  auto it = scales->find(unit);
  return it == scales->end() ? 1 : it->second;
}

}  // namespace

std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<NcuRow> ParseNcuCsv(const std::string& csv) {
  std::vector<NcuRow> rows;
  int id_col = -1, pid_col = -1, name_col = -1, grid_col = -1, block_col = -1,
      metric_col = -1, unit_col = -1, value_col = -1;
  for (absl::string_view raw : absl::StrSplit(csv, '\n')) {
    const std::string line(absl::StripTrailingAsciiWhitespace(raw));
    if (line.empty() || line[0] != '"') continue;  // ==PROF== lines.
    const std::vector<std::string> f = CsvFields(line);
    if (metric_col < 0) {
      for (int i = 0; i < static_cast<int>(f.size()); ++i) {
        if (f[i] == "ID") id_col = i;
        if (f[i] == "Process ID") pid_col = i;
        if (f[i] == "Kernel Name") name_col = i;
        if (f[i] == "Grid Size") grid_col = i;
        if (f[i] == "Block Size") block_col = i;
        if (f[i] == "Metric Name") metric_col = i;
        if (f[i] == "Metric Unit") unit_col = i;
        if (f[i] == "Metric Value") value_col = i;
      }
      continue;
    }
    const int need = std::max({id_col, pid_col, name_col, grid_col, block_col,
                               metric_col, unit_col, value_col});
    if (value_col < 0 || static_cast<int>(f.size()) <= need) continue;
    std::string v = f[value_col];
    v.erase(std::remove(v.begin(), v.end(), ','), v.end());
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end == v.c_str()) continue;
    NcuRow row;
    if (id_col >= 0) row.id = f[id_col];
    if (pid_col >= 0) row.pid = f[pid_col];
    if (name_col >= 0) row.kernel = f[name_col];
    if (grid_col >= 0) row.grid = f[grid_col];
    if (block_col >= 0) row.block = f[block_col];
    row.metric = f[metric_col];
    if (unit_col >= 0) row.unit = f[unit_col];
    row.value = x * UnitScale(row.unit);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<double> NcuReferenceRunsUs(const std::vector<NcuRow>& all,
                                       const std::string& first_kernel,
                                       const std::string& candidate,
                                       const std::string& grid, int launches) {
  std::vector<const NcuRow*> rows;
  for (const NcuRow& row : all) {
    if (row.metric == "gpu__time_duration.sum") rows.push_back(&row);
  }
  std::vector<double> us;
  for (size_t i = 0; launches >= 1 && i + launches <= rows.size(); ++i) {
    const NcuRow& first = *rows[i];
    if (first.kernel != first_kernel || first.grid != grid) continue;
    double ns = first.value;
    bool run = true;
    for (int j = 1; j < launches && run; ++j) {
      const NcuRow& next = *rows[i + j];
      run = next.pid == first.pid && next.kernel != first_kernel &&
            next.kernel != candidate;
      ns += next.value;
    }
    if (run) us.push_back(ns / 1000);
  }
  return us;
}

}  // namespace kbench
