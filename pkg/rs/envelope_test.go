package rs

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

func TestParseError(t *testing.T) {
	ambiguous := `{"error":{"code":"ambiguous_connection","message":"Record 'INBOX' is present under more than one connection. Retry with ` + "`connection_id`" + `.","type":"api_error","available_connections":[{"connection_id":"cin_gmail_personal","display_name":"Personal Gmail"},{"connection_id":"cin_gmail_work","display_name":"Work Gmail"}],"retry_with":"connection_id","request_id":"req_287e990c9f7ea96f"}}`
	schemaAmbiguous := `{"error":{"code":"ambiguous_schema_detail","message":"matches 2 sources","type":"api_error","param":"connection_id","available_connections":[{"connection_id":"cin_a","connector_key":"gmail","stream":"messages","display_name":"A"},{"connector_id":"no id"},"junk",{"connection_id":"cin_b","connector_id":"gmail"}],"retry_with":{"field":"connection_id","guidance":"pick one"},"request_id":"req_body"}}`
	unauthorized := `{"error":{"code":"authentication_error","message":"Missing Bearer token","type":"authentication_error","resource_metadata":"http://127.0.0.1:7663/.well-known/oauth-protected-resource","next_step":"Fetch error.resource_metadata","request_id":"req_ef0223a305299013"}}`
	long := strings.Repeat("é", 400) // 800 bytes, two per rune

	tests := []struct {
		name   string
		status int
		rid    string // Request-Id header
		body   string
		want   *Error
	}{
		{
			name: "canonical ambiguous_connection", status: 409, body: ambiguous,
			want: &Error{
				Status: 409, RequestID: "req_287e990c9f7ea96f", Type: "api_error", Code: "ambiguous_connection",
				Message:   "Record 'INBOX' is present under more than one connection. Retry with `connection_id`.",
				RetryWith: "connection_id",
				AvailableConnections: []Connection{
					{ConnectionID: "cin_gmail_personal", DisplayName: "Personal Gmail"},
					{ConnectionID: "cin_gmail_work", DisplayName: "Work Gmail"},
				},
				Object: []byte(gjson.Get(ambiguous, "error").Raw),
			},
		},
		{
			name: "retry_with object, header request id wins, odd connections skipped", status: 409, rid: "req_header",
			body: schemaAmbiguous,
			want: &Error{
				Status: 409, RequestID: "req_header", Type: "api_error", Code: "ambiguous_schema_detail",
				Message: "matches 2 sources", Param: "connection_id", RetryWith: "connection_id",
				AvailableConnections: []Connection{
					{ConnectionID: "cin_a", DisplayName: "A", ConnectorKey: "gmail"},
					{ConnectionID: "cin_b", ConnectorID: "gmail"},
				},
				Object: []byte(gjson.Get(schemaAmbiguous, "error").Raw),
			},
		},
		{
			name: "401 with resource metadata", status: 401, body: unauthorized,
			want: &Error{
				Status: 401, RequestID: "req_ef0223a305299013", Type: "authentication_error",
				Code: "authentication_error", Message: "Missing Bearer token",
				Object: []byte(gjson.Get(unauthorized, "error").Raw),
			},
		},
		{
			name: "oauth with description", status: 400,
			body: `{"error":"invalid_grant","error_description":"grant expired","request_id":"req_top"}`,
			want: &Error{
				Status: 400, RequestID: "req_top", Type: "invalid_grant", Code: "invalid_grant", Message: "grant expired",
				Object: []byte(`{"error":"invalid_grant","error_description":"grant expired","request_id":"req_top"}`),
			},
		},
		{
			name: "oauth with message only", status: 401, body: `{"error":"invalid_token","message":"nope"}`,
			want: &Error{
				Status: 401, Type: "invalid_token", Code: "invalid_token", Message: "nope",
				Object: []byte(`{"error":"invalid_token","message":"nope"}`),
			},
		},
		{
			name: "oauth bare", status: 401, body: `{"error":"invalid_token"}`,
			want: &Error{
				Status: 401, Type: "invalid_token", Code: "invalid_token",
				Message: "resource server answered HTTP 401", Object: []byte(`{"error":"invalid_token"}`),
			},
		},
		{
			name: "other JSON object", status: 500, body: `{"code":"boom","message":"it broke","retry_with":"source_id"}`,
			want: &Error{
				Status: 500, Code: "boom", Message: "it broke", RetryWith: "source_id",
				Object: []byte(`{"code":"boom","message":"it broke","retry_with":"source_id"}`),
			},
		},
		{
			name: "empty error object", status: 418, body: `{"error":{}}`,
			want: &Error{Status: 418, Code: "http_418", Message: "resource server answered HTTP 418", Object: []byte(`{}`)},
		},
		{
			name: "error is null", status: 502, body: `{"error":null,"message":"upstream"}`,
			want: &Error{
				Status: 502, Code: "http_502", Message: "upstream",
				Object: []byte(`{"error":null,"message":"upstream"}`),
			},
		},
		{
			name: "non-string fields ignored", status: 400,
			body: `{"error":{"code":7,"message":["x"],"retry_with":3,"available_connections":{"connection_id":"x"}}}`,
			want: &Error{
				Status: 400, Code: "http_400", Message: "resource server answered HTTP 400",
				Object: []byte(`{"code":7,"message":["x"],"retry_with":3,"available_connections":{"connection_id":"x"}}`),
			},
		},
		{
			name: "plain text", status: 502, rid: "req_text", body: "\n  Bad Gateway from the proxy \n",
			want: &Error{Status: 502, RequestID: "req_text", Type: "rs_error", Code: "http_502", Message: "Bad Gateway from the proxy"},
		},
		{
			name: "empty body", status: 503, body: "",
			want: &Error{Status: 503, Type: "rs_error", Code: "http_503", Message: "resource server answered HTTP 503"},
		},
		{
			name: "JSON array is not an envelope", status: 500, body: `["a"]`,
			want: &Error{Status: 500, Type: "rs_error", Code: "http_500", Message: `["a"]`},
		},
		{
			name: "invalid JSON is text", status: 500, body: `{"error":{"code":"x"`,
			want: &Error{Status: 500, Type: "rs_error", Code: "http_500", Message: `{"error":{"code":"x"`},
		},
		{
			name: "invalid UTF-8 text", status: 500, body: "bad \xff byte",
			want: &Error{Status: 500, Type: "rs_error", Code: "http_500", Message: "bad \uFFFD byte"},
		},
		{
			name: "long text is cut on a rune boundary and says so", status: 500, body: long,
			want: &Error{
				Status: 500, Type: "rs_error", Code: "http_500",
				Message: strings.Repeat("é", 256) + " … [non-JSON error body cut at 512 of 800 bytes]",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.rid != "" {
				h.Set("Request-Id", tt.rid)
			}
			got := parseErrorTok(tt.status, h, []byte(tt.body), "", false)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseError mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	e := parseErrorTok(409, nil, []byte(`{"error":{"code":"ambiguous_connection","message":"pick one"}}`), "", false)
	want := "resource server answered HTTP Conflict (409): ambiguous_connection: pick one"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func FuzzParseError(f *testing.F) {
	seeds := []string{
		`{"error":{"code":"ambiguous_connection","available_connections":[{"connection_id":"cin_a"}],"retry_with":{"field":"connection_id"}}}`,
		`{"error":"invalid_grant","error_description":"x"}`,
		`{"code":"x"}`,
		`{"error":{}}`,
		`[]`,
		`null`,
		``,
		"text \xff",
		strings.Repeat("x", 600),
		strings.Repeat("[", 100),
		`{"error":{"code":"\u0063","message":"\ud800"}}`,
	}
	for _, s := range seeds {
		f.Add(409, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseErrorTok(status, nil, body, "", false)
		if e.Status != status {
			t.Fatalf("status %d, want %d", e.Status, status)
		}
		if e.Code == "" || e.Message == "" {
			t.Fatalf("empty code or message: %+v", e)
		}
		if e.Object != nil && !gjson.ValidBytes(e.Object) {
			t.Fatalf("Object is not JSON: %q", e.Object)
		}
		if e.Object == nil && !utf8.ValidString(e.Message) {
			t.Fatalf("text message is not valid UTF-8: %q", e.Message)
		}
		if e.Object == nil && len(e.Message) > maxTextMessage+64 {
			t.Fatalf("text message not bounded: %d bytes", len(e.Message))
		}
		if len(e.Message) > MaxMessageBytes+64 || len(e.Code) > MaxIdentifierBytes+64 || len(e.Param) > MaxIdentifierBytes+64 {
			t.Fatalf("strings not bounded: message %d, code %d, param %d bytes", len(e.Message), len(e.Code), len(e.Param))
		}
		for _, s := range []string{e.Message, e.Code, e.Type, e.Param, e.RetryWith} {
			if !utf8.ValidString(s) {
				t.Fatalf("not valid UTF-8: %q", s)
			}
		}
		if len(e.AvailableConnections) > MaxConnections || len(e.Object) > maxErrorObject {
			t.Fatalf("%d connections, %d-byte object", len(e.AvailableConnections), len(e.Object))
		}
		for _, c := range e.AvailableConnections {
			if c.ConnectionID == "" {
				t.Fatalf("connection without id: %+v", e.AvailableConnections)
			}
		}
		if e.Error() == "" {
			t.Fatal("empty Error()")
		}
	})
}
