// Package probe replays MCP calls against a server and shows what a model
// would read: the content[] text of each result, verbatim, with its size and
// outcome. It is the engine of cmd/pdpp-mcp-probe.
//
//	calls, err := probe.ParseScript("journey.probe", f) // or probe.Tour()
//	runner := &probe.Runner{Session: cs, Wire: wire, Timeout: time.Minute}
//	p := probe.NewPrinter(os.Stdout, probe.PrinterOptions{Color: probe.ColorAuto})
//	err = runner.Run(ctx, calls, p.Print)
//
// # Scripts
//
// One call per line: "TOOL {json arguments}", "tools/list" or
// "resources/read URI"; a leading "!" marks a tool call that must return
// isError. Blank lines and "#" comment lines are skipped; the comment lines
// right above a call are shown with it.
//
// # Variables
//
// A string argument that is exactly "$name", a whole argument object written
// as "TOOL $name", or $name inside a resources/read URI takes its value from
// an earlier result's model-visible text, never from structuredContent, so a
// journey that runs proves that text alone is enough to continue it. See
// VarNames for the names and Vars for when a value is replaced or retired.
//
// # What is measured
//
// Result.Raw is the JSON-RPC result as the server sent it (Wire records it;
// a decode and re-encode would reorder structuredContent's keys). Sizes count
// the text of content[] in UTF-8 bytes, code points and o200k_base tokens.
// Latency is the client-side round trip.
//
// # Output
//
// Printer draws one panel per call with lipgloss; JSONWriter writes one JSON
// object per call. Everything a server sent is untrusted: it is sanitised
// (Sanitize) before it reaches a terminal, and JSON output escapes the same
// characters.
//
// # Golden transcripts
//
// Transcript renders a call with volatile values normalised (Normalizer);
// Recorder writes one file per call and Checker compares a run with them,
// with a unified diff for each difference.
package probe
