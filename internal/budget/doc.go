// Package budget measures what a PDPP MCP server costs an agent's context
// window and checks it against a budget file.
//
// Every byte of tools/list and of each tool result is paid for on every
// conversation, so the surface is measured as a client receives it: through
// the go-sdk, over an in-memory session with the same server the binary
// builds (see [Connect], [ReadSurface], [Measure]). Results are measured by
// running a scenario of tool calls, a probe-style script with one call per
// line ([ParseScenario], [RunScenario]).
//
// [CheckSurface] and [CheckResults] turn the measurements into named checks:
// exact tool membership, byte budgets for the tools array, each tool and each
// description, the instructions (present, bounded, a self-contained head, no
// owner-token guidance), repeated cross-tool prose, schema portability for
// strict clients, and result sizes per tool. The limits come from a JSON
// budget file ([LoadLimits]); its format is documented in docs/budget.md.
//
// Token counts come from a [Tokenizer]; package o200k provides a real one.
package budget
