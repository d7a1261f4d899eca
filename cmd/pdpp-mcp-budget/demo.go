package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// longRecordID is the demo dataset's longest text: a transcript of over
// 50,000 characters, in the Work Mail connection only.
const longRecordID = dataset.DemoWorkMailConnection + "/" + dataset.DemoLongStream + ":" + dataset.DemoLongRecordKey

// builtinScenario exercises every tool on the demo dataset at the sizes the
// budgets are about: global and per-stream schema, 100-record pages of wide
// records (one stream with a single connection, paged by its next_cursor,
// and one merged from two), scalar and grouped aggregates, 100-hit lexical and
// hybrid searches and the fetch of the first hit, the fetch of a
// 50,000-character record and the window that continues it.
const builtinScenario = `# pdpp-mcp-budget built-in scenario: the demo dataset (pdpp-mcp --demo).
# A pdpp-mcp-probe script: one call per line, TOOL {json arguments}.
# $first_fetch_id, $next_cursor and $next_read_args come from the
# model-visible text of an earlier result.
schema {}
schema {"stream": "chat_messages"}
query_records {"stream": "chat_messages", "limit": 100}
query_records {"stream": "chat_messages", "limit": 100, "cursor": "$next_cursor"}
query_records {"stream": "mail_messages", "limit": 100}
aggregate {"stream": "transactions", "metric": "sum", "field": "amount"}
aggregate {"stream": "transactions", "metric": "count", "group_by": "category", "limit": 100}
aggregate {"stream": "transactions", "metric": "count", "group_by_time": "transacted_at", "granularity": "month"}
search {"q": "launch", "limit": 100}
search {"q": "launch retrospective", "mode": "hybrid", "limit": 100}
fetch {"id": "$first_fetch_id"}
fetch {"id": "` + longRecordID + `"}
read_record_field $next_read_args
`

// demoRS is the demo dataset served by an in-process resource server on
// 127.0.0.1, and a client reading it with the client token.
type demoRS struct {
	double *pdpptest.Server
	client *rs.Client
	url    string
	log    *slog.Logger
}

func startDemo(log *slog.Logger) (*demoRS, error) {
	ds, err := dataset.Demo()
	if err != nil {
		return nil, fmt.Errorf("demo dataset: %w", err)
	}
	double, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Logger: log, Now: dataset.DemoTime})
	if err != nil {
		return nil, fmt.Errorf("start demo resource server: %w", err)
	}
	token := double.Token(pdpptest.TokenClient)
	client, err := rs.New(rs.Options{BaseURL: double.URL(), Token: func() string { return token }, Logger: log})
	if err != nil {
		_ = double.Close()
		return nil, fmt.Errorf("demo resource server client: %w", err)
	}
	return &demoRS{double: double, client: client, url: double.URL(), log: log}, nil
}

func (d *demoRS) stop() {
	if err := d.double.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		d.log.Warn("stop demo resource server", "error", err)
	}
}
