package hosted

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// Metrics are the Prometheus series of a hosted endpoint. Labels are
// bounded: paths are the handler's own, tools the six known ones (anything
// else counts as "other"), statuses HTTP codes.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	rsLatency *prometheus.HistogramVec
}

// knownTools keeps the tool label bounded whatever clients send.
var knownTools = map[string]bool{
	"schema": true, "query_records": true, "aggregate": true, "search": true, "fetch": true, "read_record_field": true,
}

// NewMetrics registers the series, and the verdict cache's hit counters
// when cache is non-nil, on a registry of their own.
func NewMetrics(cache *CachedVerifier) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdpp_mcp_http_requests_total", Help: "HTTP requests by path, status and tool.",
		}, []string{"path", "status", "tool"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pdpp_mcp_http_request_duration_seconds", Help: "HTTP request latency by path and tool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"path", "tool"}),
		rsLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pdpp_mcp_rs_request_duration_seconds", Help: "Resource server call latency by outcome.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.rsLatency,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	if cache != nil {
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "pdpp_mcp_verdict_cache_hits_total", Help: "Bearer verdicts answered from the cache."},
				func() float64 { return float64(cache.hits.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "pdpp_mcp_verdict_cache_misses_total", Help: "Bearer verdicts not in the cache."},
				func() float64 { return float64(cache.misses.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "pdpp_mcp_verdict_upstream_calls_total", Help: "Bearer checks sent to the resource server or introspection endpoint."},
				func() float64 { return float64(cache.calls.Load()) }),
		)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *Metrics) observeRequest(path string, status int, tool string, d time.Duration) {
	switch path {
	case PathMCP, PathMetadata, PathIcon, PathHealth, PathReady:
	default:
		path = "other"
	}
	if tool != "" && !knownTools[tool] {
		tool = "other"
	}
	m.requests.WithLabelValues(path, strconv.Itoa(status), tool).Inc()
	m.latency.WithLabelValues(path, tool).Observe(d.Seconds())
}

// wrapRS times the RS calls of one client.
func (m *Metrics) wrapRS(c tools.RS) tools.RS { return timedRS{c, m} }

type timedRS struct {
	tools.RS
	m *Metrics
}

func (t timedRS) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	start := time.Now()
	resp, err := t.RS.Get(ctx, path, q)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	t.m.rsLatency.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	return resp, err
}
