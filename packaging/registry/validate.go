package registry

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is the registry's published schema (see README.md), embedded so
// the release tools check an entry wherever they run, offline.
//
//go:embed server.schema.json
var schemaJSON []byte

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // uri and the like are checked, as the registry does
	if err := c.AddResource("server.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("server.schema.json")
})

// Validate checks an entry against the registry's schema: the part of
// `mcp-publisher validate` that needs no network (the registry adds its own
// semantic checks when it is asked).
func Validate(entry []byte) error {
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(entry))
	if err != nil {
		return fmt.Errorf("server.json: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("server.json does not match the registry schema: %w", err)
	}
	return nil
}
