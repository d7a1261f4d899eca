package probe

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// A handle is a value a result's model-visible text hands to the next call.
// Variables are read from that text only, never from structuredContent, so a
// journey that runs proves content[] alone is enough to continue it.
type handle struct {
	name string
	// find returns the handle's value as JSON (a string, or an object for
	// argument sets) when text has it.
	find func(text string) (json.RawMessage, bool)
	// what is how the handle appears in text, for messages.
	what string
	// from names the results that carry it, for messages.
	from string
}

// handles are the variables a script may use, in documentation order.
var handles = []handle{
	{
		name: "first_fetch_id", find: tokenValue("first_fetch_id"),
		what: "first_fetch_id=", from: "search results",
	},
	{
		name: "next_cursor", find: tokenValue("next_cursor"),
		what: "next_cursor=", from: "query_records, search and read_record_field results that have more",
	},
	{
		name: "next_changes_since", find: tokenValue("next_changes_since"),
		what: "next_changes_since=", from: "query_records results read with changes_since",
	},
	{
		name: "first_read_args", find: readArgs(""),
		what: `read_record_field args={...}`,
		from: "search hits (the read of the matching passage) and field windows",
	},
	{
		name: "first_blob", find: blobHandle,
		what: "pdpp://blob/…", from: "records that reference a blob (fetch, query_records, read_record_field)",
	},
	{
		name: "next_blob", find: nextFetchID,
		what: `"next":{"tool":"fetch","args":{"id":…}}`, from: "fetch of a text blob cut short",
	},
	{
		name: "next_read_args", find: readArgs("next"),
		what: `next read_record_field args={...} or "next":{"tool":"read_record_field","args":{...}}`,
		from: "read_record_field windows and fetch documents cut short",
	},
}

// VarNames lists the variables a script may use.
func VarNames() []string {
	names := make([]string, len(handles))
	for i, h := range handles {
		names[i] = h.name
	}
	return names
}

func lookupHandle(name string) (handle, bool) {
	i := slices.IndexFunc(handles, func(h handle) bool { return h.name == name })
	if i < 0 {
		return handle{}, false
	}
	return handles[i], true
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// varName returns the variable named by a reference such as "$next_cursor".
func varName(ref string) (string, error) {
	name := strings.TrimPrefix(ref, "$")
	if !identRE.MatchString(name) {
		return "", fmt.Errorf("%q is not a variable reference: write $name (or $$ for a literal $)", clip(ref, 40))
	}
	if _, ok := lookupHandle(name); !ok {
		return "", fmt.Errorf("unknown variable $%s; known: $%s", name, strings.Join(VarNames(), ", $"))
	}
	return name, nil
}

// tokenValue finds key=VALUE where key starts the text or follows a character
// that cannot be part of a name (so has_next_cursor= is not next_cursor=).
// VALUE is a JSON string when it starts with a quote, else it runs to the next
// space; a sentence's final period is not part of it. The first occurrence
// wins: headers come before per-hit details.
func tokenValue(key string) func(string) (json.RawMessage, bool) {
	needle := key + "="
	return func(text string) (json.RawMessage, bool) {
		for off := 0; ; {
			i := strings.Index(text[off:], needle)
			if i < 0 {
				return nil, false
			}
			i += off
			off = i + len(needle)
			if i > 0 && isNameByte(text[i-1]) {
				continue
			}
			rest := text[off:]
			if strings.HasPrefix(rest, `"`) {
				var s string
				if err := json.NewDecoder(strings.NewReader(rest)).Decode(&s); err != nil || s == "" {
					continue
				}
				return quote(s), true
			}
			end := strings.IndexAny(rest, " \t\r\n")
			if end < 0 {
				end = len(rest)
			}
			v := rest[:end]
			if strings.HasSuffix(v, ".") && (end == len(rest) || rest[end] != '.') {
				v = v[:len(v)-1]
			}
			if v == "" || v == "null" {
				continue
			}
			return quote(v), true
		}
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// readArgs finds the arguments of a read_record_field call a result offers,
// in either of the two forms results show them: "<dir> read_record_field
// args={...}" in text, or "<dir>":{"tool":"read_record_field","args":{...}}
// in a JSON document (fetch). dir "" accepts any read_record_field args, as
// a search hit's evidence line shows them. The first one in the text wins.
func readArgs(dir string) func(string) (json.RawMessage, bool) {
	forms := []string{"read_record_field args=", `"tool":"read_record_field","args":`}
	if dir != "" {
		forms = []string{dir + " read_record_field args=", `"` + dir + `":{"tool":"read_record_field","args":`}
	}
	return func(text string) (json.RawMessage, bool) {
		best, bestAt := json.RawMessage(nil), len(text)
		for _, needle := range forms {
			if v, at, ok := objectAfter(text, needle); ok && at < bestAt {
				best, bestAt = v, at
			}
		}
		return best, best != nil
	}
}

// objectAfter returns the JSON object that follows the first usable
// occurrence of needle (one not preceded by a name character), compacted.
func objectAfter(text, needle string) (json.RawMessage, int, bool) {
	for off := 0; ; {
		i := strings.Index(text[off:], needle)
		if i < 0 {
			return nil, 0, false
		}
		i += off
		off = i + len(needle)
		if i > 0 && isNameByte(text[i-1]) {
			continue
		}
		var obj json.RawMessage
		if err := json.NewDecoder(strings.NewReader(text[off:])).Decode(&obj); err != nil || !strings.HasPrefix(string(obj), "{") {
			continue
		}
		out, err := compactJSON(string(obj))
		if err != nil {
			continue
		}
		return out, i, true
	}
}

// blobHandle finds the first pdpp://blob/ handle in text, plain or inside
// a JSON string (where it ends at the escaped closing quote).
func blobHandle(text string) (json.RawMessage, bool) {
	i := strings.Index(text, "pdpp://blob/")
	if i < 0 {
		return nil, false
	}
	rest := text[i:]
	if end := strings.IndexAny(rest, "\\\" \t\r\n,}"); end >= 0 {
		rest = rest[:end]
	}
	return quote(rest), true
}

// nextFetchID finds the id of the fetch call that continues a blob's text.
func nextFetchID(text string) (json.RawMessage, bool) {
	obj, _, ok := objectAfter(text, `"next":{"tool":"fetch","args":`)
	if !ok {
		return nil, false
	}
	var args struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(obj, &args) != nil || args.ID == "" {
		return nil, false
	}
	return quote(args.ID), true
}

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// Use records that a call used a variable and where its value came from.
type Use struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
	// From is the number of the call whose text held the value.
	From int `json:"from_call"`
	// FromName is that call's tool name or method.
	FromName string `json:"from"`
}

// binding is a variable's current value.
type binding struct {
	value    json.RawMessage
	from     int
	fromName string
}

// Vars holds the variables of a run. A result that shows a handle sets it; a
// later result of the same tool (or method) that does not show it unsets it,
// so a journey that reached its last page or window stops instead of looping
// back to an older handle.
type Vars struct {
	set map[string]binding
	// gone remembers which call unset a variable, for the message.
	gone map[string]binding
	// seen holds the tools and methods that have run.
	seen map[string]bool
}

// NewVars returns an empty set.
func NewVars() *Vars {
	return &Vars{set: map[string]binding{}, gone: map[string]binding{}, seen: map[string]bool{}}
}

// Observe reads the handles in the model-visible text of call n (named name).
func (v *Vars) Observe(n int, name, text string) {
	v.seen[name] = true
	for _, h := range handles {
		if val, ok := h.find(text); ok {
			v.set[h.name] = binding{value: val, from: n, fromName: name}
			delete(v.gone, h.name)
			continue
		}
		if b, ok := v.set[h.name]; ok && b.fromName == name {
			delete(v.set, h.name)
			v.gone[h.name] = binding{from: n, fromName: name}
		}
	}
}

// VarError is a variable a call used that no earlier result provided.
type VarError struct {
	Call Call
	N    int
	Name string
	why  string
}

func (e *VarError) Error() string {
	return fmt.Sprintf("call %d (%s, %s): $%s is not available: %s", e.N, e.Call.Name(), e.Call.Source, e.Name, e.why)
}

func (v *Vars) get(n int, c Call, name string) (binding, error) {
	if b, ok := v.set[name]; ok {
		return b, nil
	}
	h, _ := lookupHandle(name)
	why := fmt.Sprintf("no earlier result's content[] text shows %s (it comes from %s)", h.what, h.from)
	if g, ok := v.gone[name]; ok {
		why = fmt.Sprintf("the latest %s result (call %d) shows no %s, so the journey has nothing left to continue", g.fromName, g.from, h.what)
	}
	return binding{}, &VarError{Call: c, N: n, Name: name, why: why}
}

// Expand returns call n's arguments with every $variable replaced, compacted
// with key order kept, and the variables used.
func (v *Vars) Expand(n int, c Call) (json.RawMessage, []Use, error) {
	var uses []Use
	use := func(name string) (json.RawMessage, error) {
		b, err := v.get(n, c, name)
		if err != nil {
			return nil, err
		}
		uses = append(uses, Use{Name: name, Value: b.value, From: b.from, FromName: b.fromName})
		return b.value, nil
	}
	args := c.Args
	switch {
	case args == "":
		return json.RawMessage("{}"), nil, nil
	case strings.HasPrefix(args, "$"):
		name, err := varName(args)
		if err != nil {
			return nil, nil, err
		}
		val, err := use(name)
		if err != nil {
			return nil, nil, err
		}
		if !strings.HasPrefix(string(val), "{") {
			return nil, nil, &VarError{Call: c, N: n, Name: name, why: "it holds a string, not an argument object; use it as a value: {\"key\":\"$" + name + "\"}"}
		}
		return val, uses, nil
	}
	var b strings.Builder
	last := 0
	err := jsonStrings(args, func(start, end int, s string) error {
		var repl json.RawMessage
		switch {
		case strings.HasPrefix(s, "$$"):
			repl = quote(s[1:])
		case strings.HasPrefix(s, "$"):
			name, err := varName(s)
			if err != nil {
				return err
			}
			if repl, err = use(name); err != nil {
				return err
			}
		default:
			return nil
		}
		b.WriteString(args[last:start])
		b.Write(repl)
		last = end
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	b.WriteString(args[last:])
	out, err := compactJSON(b.String())
	if err != nil {
		return nil, nil, fmt.Errorf("call %d (%s): arguments after substitution: %w", n, c.Source, err)
	}
	return out, uses, nil
}

// uriRef is a $name (or ${name}) inside a URI, or a literal $$.
type uriRef struct {
	start, end int
	text       string // "$name", or "$$" for a literal
}

func uriRefs(s string) []uriRef {
	var refs []uriRef
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			refs = append(refs, uriRef{start: i, end: i + 2, text: "$$"})
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				refs = append(refs, uriRef{start: i, end: len(s), text: s[i:]})
				return refs
			}
			refs = append(refs, uriRef{start: i, end: i + end + 1, text: "$" + s[i+2:i+end]})
			i += end
			continue
		}
		j := i + 1
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		refs = append(refs, uriRef{start: i, end: j, text: s[i:j]})
		i = j - 1
	}
	return refs
}

// ExpandURI replaces the $variables of a resources/read URI; a string value
// is inserted path-escaped, so an id such as cin_a/orders:o1 stays one
// segment.
func (v *Vars) ExpandURI(n int, c Call) (string, []Use, error) {
	var uses []Use
	var b strings.Builder
	last := 0
	for _, ref := range uriRefs(c.URI) {
		b.WriteString(c.URI[last:ref.start])
		last = ref.end
		if ref.text == "$$" {
			b.WriteByte('$')
			continue
		}
		name, err := varName(ref.text)
		if err != nil {
			return "", nil, err
		}
		bd, err := v.get(n, c, name)
		if err != nil {
			return "", nil, err
		}
		var s string
		if json.Unmarshal(bd.value, &s) != nil {
			return "", nil, &VarError{Call: c, N: n, Name: name, why: "it holds an argument object, which cannot go into a URI"}
		}
		uses = append(uses, Use{Name: name, Value: bd.value, From: bd.from, FromName: bd.fromName})
		b.WriteString(url.PathEscape(s))
	}
	b.WriteString(c.URI[last:])
	return b.String(), uses, nil
}
