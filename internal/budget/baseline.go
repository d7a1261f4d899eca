package budget

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// A baseline is a measurement kept to compare later runs with: written by
// --write-baseline on the main branch, read by --baseline in a pull
// request, which then fails when something grew by more than --max-growth
// percent. Sizes are compared in bytes, which is what the limits bound;
// tokens are carried along for the report.

// BaselineVersion is the format of a baseline file.
const BaselineVersion = 1

// Baseline is what a baseline file holds: the surface and the scenario's
// result sizes of one run.
type Baseline struct {
	Version   int        `json:"version"`
	Tokenizer string     `json:"tokenizer"`
	ToolsList *Footprint `json:"tools_list"`
	Scenario  string     `json:"scenario,omitempty"`
	Results   []Call     `json:"results,omitempty"`
}

// NewBaseline keeps a report's measurements.
func NewBaseline(r *Report) *Baseline {
	return &Baseline{Version: BaselineVersion, Tokenizer: r.Tokenizer, ToolsList: r.ToolsList, Scenario: r.Scenario, Results: r.Results}
}

// WriteBaseline writes b as indented JSON.
func WriteBaseline(w io.Writer, b *Baseline) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(b)
}

// ParseBaseline reads a baseline file strictly: a file of another version
// or shape is refused rather than compared wrongly.
func ParseBaseline(src []byte) (*Baseline, error) {
	var b Baseline
	if err := decodeStrict(src, &b); err != nil {
		return nil, err
	}
	if b.Version != BaselineVersion {
		return nil, fmt.Errorf("version %d; this build reads version %d (write the baseline again with --write-baseline)", b.Version, BaselineVersion)
	}
	if b.ToolsList == nil {
		return nil, errors.New("no tools_list")
	}
	return &b, nil
}

// LoadBaseline reads a baseline file.
func LoadBaseline(path string) (*Baseline, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	b, err := ParseBaseline(src)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	return b, nil
}

// Change is how an item compares with the baseline.
type Change string

// Changes.
const (
	Added     Change = "added"
	Removed   Change = "removed"
	Grown     Change = "grown"
	Shrunk    Change = "shrunk"
	Unchanged Change = "unchanged"
)

// Delta is one item compared with the baseline, in bytes.
type Delta struct {
	// What is the kind of item: tool, tools array, instructions, resource
	// templates, prompts, result text, result structuredContent.
	What   string `json:"what"`
	Name   string `json:"name,omitempty"`
	Change Change `json:"change"`
	Before int    `json:"before"`
	After  int    `json:"after"`
	// BeforeTokens and AfterTokens are carried for the report.
	BeforeTokens int `json:"before_tokens"`
	AfterTokens  int `json:"after_tokens"`
	// Over is true when the item grew by more than the tolerated growth
	// (an added item always has).
	Over bool `json:"over,omitempty"`
}

// Label names the item for people.
func (d Delta) Label() string {
	if d.Name == "" {
		return d.What
	}
	return d.What + " " + d.Name
}

// Percent is the growth relative to the baseline (0 for an added item).
func (d Delta) Percent() float64 {
	if d.Before == 0 {
		return 0
	}
	return float64(d.After-d.Before) * 100 / float64(d.Before)
}

// Comparison is a run compared with a baseline.
type Comparison struct {
	File             string  `json:"file"`
	MaxGrowthPercent float64 `json:"max_growth_percent"`
	// Deltas are every item of either run: the totals first, then each
	// tool (this run's order, then the removed ones), then the results.
	Deltas []Delta `json:"deltas"`
}

// Changed returns the deltas that are not Unchanged.
func (c *Comparison) Changed() []Delta {
	var out []Delta
	for _, d := range c.Deltas {
		if d.Change != Unchanged {
			out = append(out, d)
		}
	}
	return out
}

func delta(what, name string, before, after, beforeTok, afterTok int, maxGrowth float64) Delta {
	d := Delta{What: what, Name: name, Before: before, After: after, BeforeTokens: beforeTok, AfterTokens: afterTok}
	switch {
	case after > before:
		d.Change = Grown
		// Over when after > before × (1 + maxGrowth/100).
		d.Over = float64(after)*100 > float64(before)*(100+maxGrowth)
	case after < before:
		d.Change = Shrunk
	default:
		d.Change = Unchanged
	}
	return d
}

// Compare compares a report with a baseline. Tools are matched by name,
// results by their number and tool; an item only in the report is added,
// one only in the baseline removed. An added tool is over any tolerated
// growth; an added result is not (the scenario changed, not the server).
func Compare(base *Baseline, file string, r *Report, maxGrowth float64) *Comparison {
	c := &Comparison{File: file, MaxGrowthPercent: maxGrowth}
	add := func(d Delta) { c.Deltas = append(c.Deltas, d) }
	b, n := base.ToolsList, r.ToolsList
	add(delta("tools array", "", b.Bytes, n.Bytes, b.Tokens, n.Tokens, maxGrowth))
	add(delta("instructions", "", b.Instructions.Bytes, n.Instructions.Bytes, b.Instructions.Tokens, n.Instructions.Tokens, maxGrowth))
	for _, l := range []struct {
		what          string
		before, after *ListSize
	}{{"resource templates", b.ResourceTemplates, n.ResourceTemplates}, {"prompts", b.Prompts, n.Prompts}} {
		if l.before == nil && l.after == nil {
			continue
		}
		var bb, bt, ab, at int
		if l.before != nil {
			bb, bt = l.before.Bytes, l.before.Tokens
		}
		if l.after != nil {
			ab, at = l.after.Bytes, l.after.Tokens
		}
		add(delta(l.what, "", bb, ab, bt, at, maxGrowth))
	}

	before := map[string]ToolFootprint{}
	for _, t := range b.Tools {
		before[t.Name] = t
	}
	seen := map[string]bool{}
	for _, t := range n.Tools {
		seen[t.Name] = true
		old, ok := before[t.Name]
		if !ok {
			add(Delta{What: "tool", Name: t.Name, Change: Added, After: t.Bytes, AfterTokens: t.Tokens, Over: true})
			continue
		}
		add(delta("tool", t.Name, old.Bytes, t.Bytes, old.Tokens, t.Tokens, maxGrowth))
	}
	for _, t := range b.Tools {
		if !seen[t.Name] {
			add(Delta{What: "tool", Name: t.Name, Change: Removed, Before: t.Bytes, BeforeTokens: t.Tokens})
		}
	}

	key := func(call Call) string { return fmt.Sprintf("%d %s", call.Seq, call.Label()) }
	oldCalls := map[string]Call{}
	for _, call := range base.Results {
		oldCalls[key(call)] = call
	}
	seen = map[string]bool{}
	for _, call := range r.Results {
		k := key(call)
		seen[k] = true
		name := fmt.Sprintf("call %d (%s)", call.Seq, call.Label())
		old, ok := oldCalls[k]
		if !ok {
			// A call the baseline's scenario did not make is a change of
			// the scenario, not growth of the server: shown, not failed.
			add(Delta{What: "result", Name: name, Change: Added, After: call.Text.Bytes + call.Structured.Bytes,
				AfterTokens: call.Text.Tokens + call.Structured.Tokens})
			continue
		}
		add(delta("result text", name, old.Text.Bytes, call.Text.Bytes, old.Text.Tokens, call.Text.Tokens, maxGrowth))
		if old.Structured.Bytes > 0 || call.Structured.Bytes > 0 {
			add(delta("result structuredContent", name, old.Structured.Bytes, call.Structured.Bytes, old.Structured.Tokens, call.Structured.Tokens, maxGrowth))
		}
	}
	for _, call := range base.Results {
		if !seen[key(call)] {
			add(Delta{What: "result", Name: fmt.Sprintf("call %d (%s)", call.Seq, call.Label()), Change: Removed,
				Before: call.Text.Bytes + call.Structured.Bytes, BeforeTokens: call.Text.Tokens + call.Structured.Tokens})
		}
	}
	return c
}

// Check is the comparison's verdict: a finding for every item that was
// added or grew by more than the tolerated growth.
func (c *Comparison) Check() Check {
	var found []string
	for _, d := range c.Deltas {
		if !d.Over {
			continue
		}
		if d.Change == Added {
			found = append(found, fmt.Sprintf("added %s (%s bytes)", d.Label(), thousands(d.After)))
			continue
		}
		found = append(found, fmt.Sprintf("%s grew %s bytes (%+.1f%%): %s → %s", d.Label(), thousands(d.After-d.Before), d.Percent(), thousands(d.Before), thousands(d.After)))
	}
	growth := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", c.MaxGrowthPercent), "0"), ".")
	ch := findings("baseline.growth", "findings", found,
		fmt.Sprintf("larger than the baseline %s by more than --max-growth %s%%; shrink what grew, or write the baseline again with --write-baseline when the growth is meant", c.File, growth))
	return ch
}
