package budget

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind says how a check compares its measurement with its limit.
type Kind string

const (
	// AtMost passes when Measured <= Limit; headroom is Limit - Measured.
	AtMost Kind = "at_most"
	// Findings passes when nothing was found (Measured == 0); Findings
	// lists what was.
	Findings Kind = "findings"
	// Exact passes when the measured set is exactly the expected one.
	Exact Kind = "exact"
)

// Check is the outcome of one named check. The name of a check that has a
// limit is that limit's key, exactly as budget.json nests it and --limit
// takes it (tools_list.max_bytes, results.search.text_max_bytes); checks
// with no numeric limit (membership, findings, calls) have names of their
// own. Subject says what a limit shared by several checks was applied to.
type Check struct {
	Name string `json:"name"`
	// Key is the budget-file key of the limit of a check whose name is not
	// one (the tolerated findings of schema.portability, prose.repeated).
	Key      string `json:"key,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Kind     Kind   `json:"kind"`
	Measured int    `json:"measured"`
	Limit    int    `json:"limit"`
	Unit     string `json:"unit"`
	Pass     bool   `json:"pass"`
	// Message says why the check failed and what to change; empty on a pass.
	// For a Findings check it is a summary and Findings says what was found.
	Message string `json:"message,omitempty"`
	// Findings are the individual problems, complete: one per tool, phrase
	// or schema construct.
	Findings []string `json:"findings,omitempty"`
}

// Headroom is Limit - Measured for an AtMost check (negative when over).
func (c Check) Headroom() (int, bool) {
	if c.Kind != AtMost {
		return 0, false
	}
	return c.Limit - c.Measured, true
}

func atMost(name, subject, unit string, measured, limit int, what string) Check {
	c := Check{Name: name, Subject: subject, Kind: AtMost, Measured: measured, Limit: limit, Unit: unit, Pass: measured <= limit}
	if !c.Pass {
		c.Message = fmt.Sprintf("%s: %s %s, %s over the budget of %s", what, thousands(measured), unit, thousands(measured-limit), thousands(limit))
	}
	return c
}

func findings(name, unit string, found []string, message string) Check {
	return tolerated(name, "", unit, found, 0, message)
}

// tolerated is a Findings check that passes with up to limit findings; key
// is the budget-file key of that limit.
func tolerated(name, key, unit string, found []string, limit int, message string) Check {
	c := Check{Name: name, Key: key, Kind: Findings, Measured: len(found), Limit: limit, Unit: unit, Pass: len(found) <= limit, Findings: found}
	if !c.Pass {
		c.Message = message
		if limit > 0 {
			c.Message += fmt.Sprintf(" (%d found, %s tolerates %d)", len(found), key, limit)
		}
	}
	return c
}

// LimitKey is the budget-file key of the check's limit, if it has one.
func (c Check) LimitKey() string {
	switch {
	case c.Key != "":
		return c.Key
	case c.Kind == AtMost:
		return c.Name
	}
	return ""
}

// CheckSurface runs every check of the tools/list footprint, the
// instructions and the other lists, in report order: each limit the file
// sets, schema portability and repeated prose always, and the PDPP checks
// (membership, the instructions' presence and head, owner-credential
// guidance) when l.PDPP asks for them.
func CheckSurface(st *SurfaceText, fp *Footprint, l *Limits) []Check {
	var checks []Check
	if l.PDPP {
		checks = append(checks, checkMembership(st.Tools))
	}
	if l.ToolsList.MaxBytes > 0 {
		total := atMost("tools_list.max_bytes", "", "bytes", fp.Bytes, l.ToolsList.MaxBytes, "tools/list tools array")
		if !total.Pass {
			total.Message += "; shrink the largest tools: " + largest(fp.Tools, 3)
		}
		checks = append(checks, total)
	}
	for _, t := range fp.Tools {
		name, subject := "tools_list.tool_max_bytes."+t.Name, ""
		limit, ok := l.ToolsList.ToolMaxBytes[t.Name]
		if !ok {
			limit, ok = l.ToolsList.ToolMaxBytes[AnyTool]
			name, subject = "tools_list.tool_max_bytes."+AnyTool, t.Name
		}
		if ok && limit > 0 {
			c := atMost(name, subject, "bytes", t.Bytes, limit, "tool "+t.Name)
			if !c.Pass {
				c.Message += fmt.Sprintf(" (description %d, input schema %d, output schema %d, the rest %d)", t.DescriptionBytes, t.InputSchemaBytes, t.OutputSchemaBytes, t.RestBytes)
			}
			checks = append(checks, c)
		}
	}
	for _, t := range fp.Tools {
		if l.ToolsList.DescriptionMaxBytes <= 0 {
			break
		}
		c := atMost("tools_list.description_max_bytes", t.Name, "bytes", t.DescriptionBytes, l.ToolsList.DescriptionMaxBytes, "description of "+t.Name)
		if !c.Pass {
			c.Message += "; cross-tool guidance belongs in the server instructions"
		}
		checks = append(checks, c)
	}

	if l.PDPP {
		checks = append(checks, checkInstructions(st.Instructions, fp.Instructions, l.Instructions)...)
	} else if l.Instructions.MaxBytes > 0 {
		checks = append(checks, atMost("instructions.max_bytes", "", "bytes", fp.Instructions.Bytes, l.Instructions.MaxBytes, "instructions"))
	}
	for _, lst := range []struct {
		key   string
		size  *ListSize
		limit int
		what  string
	}{
		{"resource_templates.max_bytes", fp.ResourceTemplates, l.ResourceTemplates.MaxBytes, "resources/templates/list array"},
		{"prompts.max_bytes", fp.Prompts, l.Prompts.MaxBytes, "prompts/list array"},
	} {
		if lst.limit > 0 {
			n := 0
			if lst.size != nil {
				n = lst.size.Bytes
			}
			checks = append(checks, atMost(lst.key, "", "bytes", n, lst.limit, lst.what))
		}
	}
	if l.PDPP {
		checks = append(checks, checkOwnerGuidance(st))
	}
	checks = append(checks,
		checkRepeatedProse(st.Tools, l),
		checkPortability(st.Tools, l),
	)
	return checks
}

// forbiddenTool says why a tool name can never join the read surface, or ""
// when nothing is known against it beyond not being one of the six.
func forbiddenTool(name string) string {
	n := strings.ToLower(name)
	words := strings.FieldsFunc(n, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	has := func(ws ...string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(ws, w) })
	}
	switch {
	case n == "list_streams":
		return "stream listing is schema's job"
	case n == "fetch_blob":
		return "blobs are reached through fetch_url, never as a tool"
	case has("event", "events", "subscription", "subscriptions", "subscribe", "webhook", "webhooks"):
		return "event delivery is REST and operator surface, not MCP"
	case has("debug", "test", "dev", "developer"):
		return "developer tools never ship on the read surface"
	}
	return ""
}

func checkMembership(tools []*mcp.Tool) Check {
	var got []string
	for _, t := range tools {
		got = append(got, t.Name)
	}
	var missing, extra, why []string
	for _, name := range surface {
		if !slices.Contains(got, name) {
			missing = append(missing, name)
		}
	}
	seen := map[string]bool{}
	for _, name := range got {
		switch {
		case seen[name]:
			extra = append(extra, name+" (listed twice)")
		case !slices.Contains(surface, name):
			extra = append(extra, name)
			if reason := forbiddenTool(name); reason != "" {
				why = append(why, name+": "+reason)
			}
		}
		seen[name] = true
	}
	c := Check{Name: "tools.membership", Kind: Exact, Measured: len(got), Limit: len(surface), Unit: "tools",
		Pass: len(missing) == 0 && len(extra) == 0}
	if !c.Pass {
		var parts []string
		if len(extra) > 0 {
			parts = append(parts, "unexpected "+strings.Join(extra, ", "))
		}
		if len(missing) > 0 {
			parts = append(parts, "missing "+strings.Join(missing, ", "))
		}
		c.Message = "tools/list must hold exactly " + strings.Join(surface, ", ") + "; " + strings.Join(parts, "; ")
		if len(why) > 0 {
			c.Message += " (" + strings.Join(why, "; ") + ")"
		}
		c.Findings = append(extra, missing...)
	}
	return c
}

// largest names the n largest tools, with their bytes.
func largest(tools []ToolFootprint, n int) string {
	s := slices.Clone(tools)
	slices.SortStableFunc(s, func(a, b ToolFootprint) int { return b.Bytes - a.Bytes })
	var parts []string
	for _, t := range s[:min(n, len(s))] {
		parts = append(parts, fmt.Sprintf("%s %s", t.Name, thousands(t.Bytes)))
	}
	return strings.Join(parts, ", ")
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
