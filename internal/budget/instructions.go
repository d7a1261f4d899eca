package budget

import (
	"fmt"
	"regexp"
	"strings"
)

// headTopic is something the first HeadChars characters of the instructions
// must cover, because some hosts keep only that much.
type headTopic struct {
	name    string
	covered func(lower string) bool
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

var headTopics = []headTopic{
	{"schema-first discovery (schema)", func(s string) bool { return strings.Contains(s, "schema") }},
	{"connection_id", func(s string) bool { return strings.Contains(s, "connection_id") }},
	{"typed filters (filter with typed or object)", func(s string) bool {
		return strings.Contains(s, "filter") && containsAny(s, "typed", "object")
	}},
	{"paging or narrowing (cursor, page, limit, narrow or fields)", func(s string) bool {
		return containsAny(s, "cursor", "page", "paging", "limit", "narrow", "fields")
	}},
}

func checkInstructions(text string, size TextSize, l InstructionsLimits) []Check {
	var absent []string
	if strings.TrimSpace(text) == "" {
		absent = []string{"the initialize result has no instructions"}
	}
	present := findings("instructions.present", "findings", absent,
		"cross-tool guidance (schema first, connection_id, typed filters, paging) has nowhere else to live")

	head := text
	if r := []rune(text); len(r) > l.HeadChars {
		head = string(r[:l.HeadChars])
	}
	lower := strings.ToLower(head)
	var missing []string
	for _, t := range headTopics {
		if !t.covered(lower) {
			missing = append(missing, t.name)
		}
	}
	headCheck := findings("instructions.head", "findings", missing,
		fmt.Sprintf("the first %d characters of the instructions must stand alone; they do not mention", l.HeadChars))

	return []Check{
		present,
		atMost("instructions.max_bytes", "", "bytes", size.Bytes, l.MaxBytes, "instructions"),
		headCheck,
	}
}

// ownerGuidance matches advice about owner or control-plane credentials. The
// read surface works only with a grant-scoped token; naming the others there
// invites a model to go looking for them.
var ownerGuidance = regexp.MustCompile(`(?i)owner[\s_-]*(token|bearer|credential|session|cookie|agent)s?|control[\s_-]*plane|pdpp_owner`)

// checkOwnerGuidance looks at the instructions and every description a tool
// carries.
func checkOwnerGuidance(st *SurfaceText) Check {
	var found []string
	look := func(where, text string) {
		for _, loc := range ownerGuidance.FindAllStringIndex(text, -1) {
			found = append(found, fmt.Sprintf("%s: %q", where, excerpt(text, loc[0], loc[1], 30)))
		}
	}
	look("instructions", st.Instructions)
	for _, t := range st.Tools {
		look(t.Name+" description", t.Description)
		for _, d := range schemaDescriptions(t) {
			look(t.Name+" "+d.where, d.text)
		}
	}
	return findings("surface.owner_guidance", "findings", found,
		"owner or control-plane credential guidance on the read surface, which only ever uses the grant-scoped token")
}

// excerpt returns text[start:end] with up to n bytes either side, cut at
// character boundaries and marked with … where cut.
func excerpt(text string, start, end, n int) string {
	from, to := max(0, start-n), min(len(text), end+n)
	for from > 0 && !isBoundary(text, from) {
		from--
	}
	for to < len(text) && !isBoundary(text, to) {
		to++
	}
	s := text[from:to]
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}

func isBoundary(s string, i int) bool { return i == 0 || i == len(s) || s[i]&0xC0 != 0x80 }
