package budget

import (
	"bytes"
	"fmt"

	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

// A scenario is a pdpp-mcp-probe script, parsed and run by package probe, so
// one script serves both commands: one call per line ("TOOL {json}",
// "!TOOL {json}" for an expected error result, "resources/read URI",
// "tools/list"), # comments, and $variables taken from earlier results'
// model-visible text ($first_fetch_id, $next_cursor, $next_read_args, …;
// see probe.VarNames).

// Scenario is a parsed script.
type Scenario struct {
	Name  string
	Calls []probe.Call
}

// ParseScenario parses a script; name labels errors ("name:line: …"). Every
// problem is reported at once. A script without calls is an error too.
func ParseScenario(name string, src []byte) (*Scenario, error) {
	calls, err := probe.ParseScript(name, bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("%s: no calls: write one call per line, such as: schema {}", name)
	}
	return &Scenario{Name: name, Calls: calls}, nil
}
