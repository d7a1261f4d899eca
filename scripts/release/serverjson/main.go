// Command serverjson prints packaging/registry/server.json stamped for one
// release, for `mcp-publisher publish`:
//
//	go run ./scripts/release/serverjson -version 1.2.3 -bundles dist/mcpb > server.json
//
// -bundles is the folder holding that release's pdpp-mcp_<version>_<os>_<arch>.mcpb
// files; every bundle the entry lists must be there (its SHA-256 is published).
// The result is checked against the registry's schema before it is printed.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/pdpp-mcp/pdpp-mcp/packaging/registry"
)

func main() {
	in := flag.String("in", "packaging/registry/server.json", "the committed registry entry")
	version := flag.String("version", "", "release version (a leading v is dropped)")
	bundles := flag.String("bundles", "", "folder with the release's .mcpb files")
	flag.Parse()
	if *version == "" || *bundles == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: serverjson -version X.Y.Z -bundles DIR [-in server.json]")
		os.Exit(64)
	}
	b, err := os.ReadFile(*in)
	if err == nil {
		b, err = registry.Stamp(b, *version, *bundles)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serverjson:", err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
