// GET /metrics on kbd's HTTP port: the Prometheus text of a Metrics
// registry (base/metrics.h), which knows nothing of HTTP.
#ifndef KBENCH_SERVER_HTTP_METRICS_ROUTE_H_
#define KBENCH_SERVER_HTTP_METRICS_ROUTE_H_

#include <httplib.h>

#include "base/metrics.h"

namespace kbench {

// Serves GET /metrics (Content-Type "text/plain; version=0.0.4;
// charset=utf-8") from `metrics`, which must outlive the server; other
// methods get 405 JSON.
void InstallMetricsRoute(httplib::Server& server, Metrics* metrics);

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_METRICS_ROUTE_H_
