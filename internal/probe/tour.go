package probe

import (
	_ "embed"
	"strings"
)

// TourScript is the built-in tour: `pdpp-mcp-probe --demo` runs it, and
// `pdpp-mcp-probe --print-tour` prints it as a starting point for scripts.
//
//go:embed tour.probe
var TourScript string

// TourName is the tour's name in call sources ("tour.probe:12").
const TourName = "tour.probe"

// Tour returns the calls of the built-in tour.
func Tour() ([]Call, error) {
	return ParseScript(TourName, strings.NewReader(TourScript))
}
