// Package loglevel reads the --log-level value the commands share.
package loglevel

import (
	"fmt"
	"log/slog"
	"strings"
)

// Parse reads debug, info, warn (or warning) and error, case-insensitively.
// An empty value means unset and gives def, so an empty environment
// variable does not break start-up.
func Parse(s string, def slog.Level) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return def, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q is not debug, info, warn or error", s)
}
