#include "server/http/metrics_route.h"

#include "server/http/http_json.h"

namespace kbench {

void InstallMetricsRoute(httplib::Server& server, Metrics* metrics) {
  server.Get("/metrics",
             [metrics](const httplib::Request&, httplib::Response& res) {
               res.status = 200;
               res.set_content(metrics->RenderPrometheus(),
                               "text/plain; version=0.0.4; charset=utf-8");
             });
  RouteNonGetTo405(server, "/metrics",
                   "GET /metrics (Prometheus text format 0.0.4)");
}

}  // namespace kbench
