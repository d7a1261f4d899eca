package tools

import (
	"testing"
	"time"
)

// The schema tool's rendering of a compact answer is made once per answer:
// the same bytes under the same key reuse it, other bytes, another key or an
// expired entry render afresh.
func TestSchemaRenderingMemo(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCapabilityCache(time.Minute, 8, 1<<20, func() time.Time { return now })
	calls := 0
	render := func(data string) func() schemaRendering {
		return func() schemaRendering {
			calls++
			return schemaRendering{data: data, text: "text of " + data}
		}
	}
	k := capabilityKey{"cred", "", ""}
	body := `{"connectors":[{"streams":[{"name":"mail","field_capabilities":{"subject":"t=string,role=primary-title"}}]}]}`
	check := func(step string, got schemaRendering, wantData string, wantCalls int) {
		t.Helper()
		if got.data != wantData || got.text != "text of "+wantData || calls != wantCalls {
			t.Fatalf("%s: %+v after %d renders, want data %q after %d", step, got, calls, wantData, wantCalls)
		}
	}
	check("first", c.rendered(k, body, render("index")), "index", 1)
	check("same answer", c.rendered(k, body, render("other")), "index", 1)
	check("changed answer", c.rendered(k, body+" ", render("changed")), "changed", 2)
	check("another credential", c.rendered(capabilityKey{"cred2", "", ""}, body+" ", render("cred2")), "cred2", 3)
	check("another stream", c.rendered(capabilityKey{"cred", "mail", ""}, body+" ", render("mail")), "mail", 4)
	now = now.Add(time.Minute)
	check("expired", c.rendered(k, body+" ", render("later")), "later", 5)

	// Data that is the answer itself is kept once, as the cached body, and
	// still returned whole.
	sk := capabilityKey{"cred", "s", ""}
	check("verbatim", c.rendered(sk, body, func() schemaRendering { calls++; return schemaRendering{data: body, text: "text of " + body} }), body, 6)
	if e, _ := c.entry(sk); e.rendering.data != "" || !e.rendering.dataIsBody {
		t.Fatalf("verbatim data kept twice: %+v", e.rendering)
	}
	check("verbatim again", c.rendered(sk, body, render("x")), body, 6)
}
