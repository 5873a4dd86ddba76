#include "base/logging.h"

#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace kbench {

void InitLogging(const std::string& program, const std::string& level) {
  auto logger = spdlog::stderr_color_mt(program);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ " + program + "[%P] %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace kbench
