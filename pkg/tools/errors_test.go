package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// guardError stands for a lower layer's coded error (the credential guard).
type guardError struct {
	code string
	err  error
}

func (e *guardError) Error() string     { return "refusing the cached credential: it is an owner token" }
func (e *guardError) ErrorCode() string { return e.code }
func (e *guardError) Unwrap() error     { return e.err }

func TestErrorText(t *testing.T) {
	env := &Env{ProviderURL: "https://pdpp.example.com"}
	ambiguous := &rs.Error{Status: 409, RequestID: "req_1", Type: "api_error", Code: "ambiguous_connection",
		Message: "Record is present under more than one connection.", RetryWith: "connection_id",
		AvailableConnections: []rs.Connection{
			{ConnectionID: "cin_gmail_personal", DisplayName: "Personal Gmail"},
			{ConnectionID: "cin_gmail_work", DisplayName: "Work Gmail", ConnectorKey: "gmail"},
		}}
	var many []rs.Connection
	for i := range 14 {
		many = append(many, rs.Connection{ConnectionID: fmt.Sprintf("cin_%02d", i)})
	}
	for _, tc := range []struct {
		name string
		err  error
		want string // exact text when it starts with "error", else substrings separated by " ~ "
	}{
		{"tool error", &toolError{Code: CodeInvalidFilter, Param: "filter", Message: "filter must be an object", Next: "pass an object"},
			"error code=invalid_filter param=filter\nmessage: filter must be an object\nnext: pass an object"},
		{"ambiguous connection", ambiguous,
			"error code=ambiguous_connection http_status=409 request_id=req_1 retry_with=connection_id\n" +
				"message: Record is present under more than one connection.\n" +
				"available_connections: {connection_id:cin_gmail_personal,display_name:\"Personal Gmail\"}|{connection_id:cin_gmail_work,display_name:\"Work Gmail\",connector_key:gmail}\n" +
				`next: call again with connection_id set to one of "cin_gmail_personal", "cin_gmail_work"`},
		{"many candidates", &rs.Error{Status: 409, Code: "ambiguous_schema_detail", AvailableConnections: many},
			`available_connections: {connection_id:cin_00}| ~ |{connection_id:cin_11}|more:2 ~ "cin_11"; call schema for the other connections`},
		{"client filter ban", &rs.Error{Status: 400, RequestID: "req_2", Type: "invalid_request_error", Code: "invalid_request",
			Param: "filter", Message: "filter[...] is not supported for client-token reads in PDPP v0.1"},
			"error code=invalid_request http_status=400 request_id=req_2 param=filter ~ this grant's token cannot filter, expand or use views ~ drop filter ~ aggregate ~ search ~ fields, limit and cursor"},
		{"client view ban", &rs.Error{Status: 400, Code: "invalid_request", Param: "view", Message: "Client record reads must use explicit fields"},
			"use fields instead of view"},
		{"owner filter mistake is not the ban", &rs.Error{Status: 400, Code: "invalid_request", Param: "filter", Message: "Range filters are not declared for 'x'"},
			"next: fix filter and call again"},
		{"401 after a reload", &credential.RejectedError{Outcome: credential.OutcomeReloaded, File: "/c/cred.json",
			Err: &rs.Error{Status: 401, RequestID: "req_9", Code: "authentication_error", Message: "Invalid or expired token"}},
			"error code=authentication_error http_status=401 request_id=req_9 ~ loaded a new credential from /c/cred.json ~ call again"},
		{"401 and the cache holds the same token", &credential.RejectedError{Outcome: credential.OutcomeUnchanged, File: "/c/cred.json",
			Err: &rs.Error{Status: 401, Code: "authentication_error"}},
			"still holds the same token; ask the user to run `pdpp connect https://pdpp.example.com`"},
		{"probe failure", &credential.ProbeError{Err: &rs.Error{Status: 503, Code: "unavailable"}},
			"error code=unavailable http_status=503 ~ checks that the token is not an owner token"},
		{"401 without advice", &rs.Error{Status: 401, Code: "authentication_error", Message: "Invalid or expired token"},
			"ask the user to run `pdpp connect https://pdpp.example.com`"},
		{"401 stream outside the grant", &rs.Error{Status: 401, Code: "context.stream_not_allowed", Message: "Token introspection failed closed"},
			"error code=context.stream_not_allowed\nmessage: the stream is not in this grant\nnext: call schema for the granted streams"},
		{"401 connection outside the grant", &rs.Error{Status: 401, Code: "context.instance_mismatch", Message: "Token introspection failed closed"},
			"error code=context.instance_mismatch\nmessage: the connection is not in this grant for this stream\nnext: call schema(stream) for its connection_ids and use one of them"},
		{"401 inactive token", &rs.Error{Status: 401, Code: "context.active_false", Message: "Token introspection failed closed"},
			"ask the user to run `pdpp connect https://pdpp.example.com`"},
		{"401 other context failure", &rs.Error{Status: 401, Code: "context.rights_missing", Message: "Token introspection failed closed"},
			"error code=context.rights_missing\nmessage: the grant does not cover this stream or connection\nnext: call schema for what it covers and use one of those"},
		{"non-JSON error", &rs.Error{Status: 502},
			"error code=http_502 http_status=502\nmessage: the resource server answered HTTP 502 without a message ~ call again later"},
		{"too large", &rs.TransportError{Code: rs.CodeTooLarge, Limit: 16, Status: 200, RequestID: "req_3", Err: errors.New("GET /v1/x: too big")},
			"error code=rs_response_too_large http_status=200 request_id=req_3\nmessage: rs_response_too_large: GET /v1/x: too big\nnext: narrow the request: a smaller limit or fewer fields"},
		{"unreachable", &rs.TransportError{Code: rs.CodeUnreachable, Err: errors.New("connection refused")},
			"the resource server at https://pdpp.example.com is not answering"},
		{"guard wrapping an RS answer", &guardError{code: "owner_token_refused", err: &rs.Error{Status: 200, RequestID: "req_4"}},
			"error code=owner_token_refused http_status=200 request_id=req_4 ~ run `pdpp connect https://pdpp.example.com` ~ No other arguments can fix this call"},
		{"wrapped RS error", fmt.Errorf("schema: %w", ambiguous), "error code=ambiguous_connection http_status=409"},
		{"cancelled", fmt.Errorf("rs: GET /v1/schema: %w", context.Canceled), "error code=canceled"},
		{"anything else", errors.New("boom"), "error code=internal_error\nmessage: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(env, tc.err).text()
			if strings.HasPrefix(tc.want, "error") && !strings.Contains(tc.want, " ~ ") && strings.Count(tc.want, "\n") >= 2 {
				if got != tc.want {
					t.Errorf("text\n got %q\nwant %q", got, tc.want)
				}
				return
			}
			for _, w := range strings.Split(tc.want, " ~ ") {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q:\n%s", w, got)
				}
			}
			if !strings.Contains(got, "\nnext: ") {
				t.Errorf("no next step:\n%s", got)
			}
		})
	}
}

func TestErrorResultCarriesTheError(t *testing.T) {
	res := errorResult(&Env{}, &rs.Error{Status: 409, Code: "ambiguous_connection", Message: "m", RetryWith: "connection_id",
		AvailableConnections: []rs.Connection{{ConnectionID: "cin_a"}}})
	body, ok := res.StructuredContent.(*errorBody)
	if !res.IsError || !ok || len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	f := body.Error
	if f.Code != "ambiguous_connection" || f.HTTPStatus != 409 || f.RetryWith != "connection_id" ||
		len(f.AvailableConnections) != 1 || f.Next == "" {
		t.Errorf("structuredContent.error = %+v", f)
	}
}

// Advice depends on the mode: a hosted caller cannot run the CLI, and a
// scope refusal never asks anyone to reconnect.
func TestAdviceKnowsTheMode(t *testing.T) {
	dead := &rs.Error{Status: 401, Code: "authentication_error", Message: "Invalid or expired token"}
	revoked := &rs.Error{Status: 403, Code: "grant_revoked"}
	owner := &credential.Error{Code: credential.CodeOwnerRefused, Message: "refused"}
	scope := &rs.Error{Status: 401, Code: "context.stream_not_allowed"}
	for _, tc := range []struct {
		mode      Mode
		err       error
		want, not string
	}{
		{ModeStdio, dead, "`pdpp connect https://p.example`", "re-approve"},
		{ModeHosted, dead, "re-approve the grant with the provider at https://p.example", "pdpp connect"},
		{ModeStdio, revoked, "`pdpp connect https://p.example`", "re-approve"},
		{ModeHosted, revoked, "re-approve the grant with the provider", "pdpp connect"},
		{ModeStdio, owner, "`pdpp connect https://p.example` to cache one", "approve a grant"},
		{ModeHosted, owner, "approve a grant for this client with the provider", "pdpp connect"},
		{ModeStdio, scope, "call schema for the granted streams", "pdpp connect"},
		{ModeHosted, scope, "call schema for the granted streams", "re-approve"},
	} {
		env := &Env{ProviderURL: "https://p.example", Mode: tc.mode}
		got := classify(env, tc.err).text()
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("mode %d, %v:\n%s\nwant %q and not %q", tc.mode, tc.err, got, tc.want, tc.not)
		}
		if rErr := resourceError(env, "pdpp://stream/x", tc.err); rErr.Error() == "" || !strings.Contains(rErr.Error(), tc.want) {
			t.Errorf("resource error for %v does not carry the same advice: %v", tc.err, rErr)
		}
	}
}
