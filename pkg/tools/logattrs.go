package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// errorAttrs describes a failure for a debug log by its shape: the error
// code, the HTTP status and request id when the RS answered, the parameter
// at fault, and the Go type. Never the message: RS and argument errors can
// echo what the person searched for, a filter value or a record id.
func errorAttrs(err error) []any {
	attrs := []any{slog.String("error_type", fmt.Sprintf("%T", err))}
	var (
		te *toolError
		re *rs.Error
		tr *rs.TransportError
		ce coder
	)
	switch {
	case errors.As(err, &te):
		attrs = append(attrs, slog.String("code", te.Code), slog.String("param", te.Param))
	case errors.As(err, &re):
		attrs = append(attrs, slog.String("code", re.Code), slog.Int("http_status", re.Status), slog.String("request_id", re.RequestID))
	case errors.As(err, &tr):
		attrs = append(attrs, slog.String("code", tr.Code), slog.Int("http_status", tr.Status), slog.String("request_id", tr.RequestID))
	case errors.As(err, &ce):
		attrs = append(attrs, slog.String("code", ce.ErrorCode()))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		attrs = append(attrs, slog.String("code", CodeCanceled))
	}
	return attrs
}
