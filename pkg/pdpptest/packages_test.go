package pdpptest_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

func TestPackageIntrospectionAndChildren(t *testing.T) {
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	s := pdpptest.New(t, pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
	tok, members := s.IssuePackage(
		pdpptest.PackageChild{ConnectionID: dataset.DemoWorkMailConnection, Streams: []string{"mail_messages"}},
		pdpptest.PackageChild{ConnectionID: ds.Connector("bank").Connections[0].ID, Revoked: true},
	)
	if len(members) != 2 || members[0].Status != "active" || members[1].Status != "grant_revoked" ||
		strings.Join(members[0].Streams, ",") != "mail_messages" || members[0].ConnectorKey != "mail" {
		t.Fatalf("members %+v", members)
	}
	form := url.Values{"token": {tok}}
	req, _ := http.NewRequest(http.MethodPost, s.IntrospectionURL(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(pdpptest.IntrospectionClientID, pdpptest.IntrospectionClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	doc := gjson.ParseBytes(body)
	if !doc.Get("active").Bool() || doc.Get("pdpp_token_kind").Str != "mcp_package" || doc.Get("package.members.#").Int() != 2 ||
		doc.Get("package.members.1.grant_status").Str != "grant_revoked" ||
		doc.Get("package.members.0.grant.streams.0.instance_ids.0").Str != dataset.DemoWorkMailConnection {
		t.Errorf("introspection %s", body)
	}
	for _, m := range members {
		if strings.Contains(string(body), m.Token) {
			t.Fatal("introspection leaks a child token")
		}
	}
	// The child token reads only its own connection and streams.
	req, _ = http.NewRequest(http.MethodGet, s.URL()+"/v1/streams", nil)
	req.Header.Set("Authorization", "Bearer "+members[0].Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := gjson.GetBytes(body, "data.#").Int(); n != 1 || gjson.GetBytes(body, "data.0.connection_id").Str != dataset.DemoWorkMailConnection {
		t.Errorf("child streams %s", body)
	}
	id, resolved, err := s.PackageMembers(tok)
	if err != nil || id == "" || len(resolved) != 2 || resolved[1].Status != "grant_revoked" {
		t.Errorf("PackageMembers %q %+v %v", id, resolved, err)
	}
	if _, _, err := s.PackageMembers(s.Token(pdpptest.TokenClient)); err == nil {
		t.Error("a client token resolved as a package")
	}
	if _, ch, err := s.PackageMembers(s.Token(pdpptest.TokenPackage)); err != nil || len(ch) != 5 {
		t.Errorf("standard package: %d children, %v", len(ch), err)
	}
}
