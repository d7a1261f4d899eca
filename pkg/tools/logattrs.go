package tools

import (
	"fmt"
	"log/slog"
)

// errorAttrs describes a failure for a debug log by its shape, from the same
// classification as the model-visible error: the code, the HTTP status and
// request id when the RS answered, the parameter at fault, and the Go type.
// Never the message: RS and argument errors can echo what the person
// searched for, a filter value or a record id.
func errorAttrs(env *Env, err error) []any {
	f := classify(env, err)
	attrs := []any{slog.String("code", f.Code), slog.String("error_type", fmt.Sprintf("%T", err))}
	if f.HTTPStatus != 0 {
		attrs = append(attrs, slog.Int("http_status", f.HTTPStatus), slog.String("request_id", f.RequestID))
	}
	if f.Param != "" {
		attrs = append(attrs, slog.String("param", f.Param))
	}
	return attrs
}
