package pdpptest

import (
	"net/http"
	"testing"
)

func TestStartServesAnswers(t *testing.T) {
	srv := New(t, Options{})
	resp, err := http.Get(srv.URL() + "/v1/schema")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", resp.StatusCode)
	}
}
