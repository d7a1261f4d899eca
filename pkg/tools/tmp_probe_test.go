package tools_test
import ("testing";"fmt")
func TestTmpProbe(t *testing.T){
	h := newHarness(t, harnessOptions{})
	for _, a := range []map[string]any{{"stream":"nope"},{"stream":"nope","detail":"full"},{"stream":"messages","connection_id":"cin_nope"}} {
		res := h.call(t, "schema", a)
		fmt.Println(res.IsError, text(res)); fmt.Println("----")
	}
	res := h.call(t, "search", map[string]any{"q":"the","mode":"hybrid","limit":2})
	fmt.Println(text(res)); fmt.Println("----")
	res = h.call(t, "query_records", map[string]any{"stream":"messages","limit":3,"connection_id":"cin_gmail_work"})
	fmt.Println(text(res)); fmt.Println("----")
}
