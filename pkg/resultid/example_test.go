package resultid_test

import (
	"errors"
	"fmt"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

func ExampleParse() {
	id, err := resultid.Parse("cin_a/slack:C1:171.0")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.ConnectionID(), id.Stream(), id.RecordID())

	_, err = resultid.Parse("cin/orders:../../etc/passwd")
	var bad *resultid.Error
	if errors.As(err, &bad) {
		fmt.Println(bad.Code)
	}
	// Output:
	// cin_a slack C1:171.0
	// invalid_id
}

func ExampleID_String() {
	plain, _ := resultid.New("cin_a", "messages", "m1")
	fmt.Println(plain)

	// A key containing "/" cannot be written textually; String returns a handle.
	url, _ := resultid.New("cin_a", "pages", "https://x.example/a")
	fmt.Println(url)
	back, _ := resultid.Parse(url.String())
	fmt.Println(back.RecordID())
	// Output:
	// cin_a/messages:m1
	// pdpp://record/eyJ2IjoxLCJraW5kIjoicmVjb3JkIiwiY29ubmVjdGlvbl9pZCI6ImNpbl9hIiwic3RyZWFtIjoicGFnZXMiLCJyZWNvcmRfaWQiOiJodHRwczovL3guZXhhbXBsZS9hIn0
	// https://x.example/a
}

func ExampleID_WithConnection() {
	legacy, _ := resultid.Parse("messages:m1")
	scoped, _ := legacy.WithConnection("cin_b")
	fmt.Println(scoped)

	_, err := scoped.WithConnection("cin_c")
	fmt.Println(err)
	// Output:
	// cin_b/messages:m1
	// id embeds connection_id 'cin_b' but the connection_id argument is 'cin_c'; pass the self-contained id alone, or make both handles agree
}
