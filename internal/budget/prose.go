package budget

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// proseTopic is cross-tool guidance that belongs in the server instructions,
// once, rather than in every tool that could use it: a phrase that mentions
// one of its words and is shared by two tools is repeated guidance.
type proseTopic struct {
	name  string
	words []string
}

var proseTopics = []proseTopic{
	{"connection_id recovery", []string{"connection_id", "available_connections", "grant_id", "ambiguous_connection", "reconnect"}},
	{"paging", []string{"cursor", "paging", "page", "has_more", "changes_since"}},
	{"event delivery", []string{"event", "subscription", "webhook", "deliver", "signing", "signature"}},
}

func (p proseTopic) in(phrase string) bool {
	lower := strings.ToLower(phrase)
	return slices.ContainsFunc(p.words, func(w string) bool { return strings.Contains(lower, w) })
}

// RepeatedPhrase is a run of text of at least the minimum length that occurs
// in the descriptions of more than one tool.
type RepeatedPhrase struct {
	Phrase string
	Tools  []string
}

// toolTexts returns each description a tool carries (its own and those in
// its schemas), whitespace collapsed. Phrases are found within one text,
// never across two.
func toolTexts(t *mcp.Tool) [][]rune {
	texts := []string{t.Description}
	for _, d := range schemaDescriptions(t) {
		texts = append(texts, d.text)
	}
	var out [][]rune
	for _, s := range texts {
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			out = append(out, []rune(s))
		}
	}
	return out
}

// RepeatedPhrases finds every maximal phrase of at least minChars characters
// shared by two or more tools. Each window of minChars characters is
// indexed by the tools it occurs in; consecutive shared windows in one text
// join into one phrase, reported once, by the first tool (in list order)
// that has it.
func RepeatedPhrases(tools []*mcp.Tool, minChars int) []RepeatedPhrase {
	texts := make([][][]rune, len(tools))
	where := map[string][]int{} // window → indexes of the tools it occurs in, ascending
	for i, t := range tools {
		texts[i] = toolTexts(t)
		for _, r := range texts[i] {
			for j := 0; j+minChars <= len(r); j++ {
				w := string(r[j : j+minChars])
				if ts := where[w]; len(ts) == 0 || ts[len(ts)-1] != i {
					where[w] = append(ts, i)
				}
			}
		}
	}
	var out []RepeatedPhrase
	seen := map[string]bool{}
	for i := range tools {
		for _, r := range texts[i] {
			// A window is this tool's to report when it is shared and no
			// earlier tool has it.
			mine := func(j int) []int {
				ts := where[string(r[j:j+minChars])]
				if len(ts) < 2 || ts[0] != i {
					return nil
				}
				return ts
			}
			for j := 0; j+minChars <= len(r); j++ {
				ts := mine(j)
				if ts == nil {
					continue
				}
				set := slices.Clone(ts)
				end := j
				for end+1+minChars <= len(r) {
					next := mine(end + 1)
					if next == nil {
						break
					}
					set = append(set, next...)
					end++
				}
				phrase := wholeWords(r, j, end+minChars)
				j = end // the windows in between are part of this phrase
				if seen[phrase] {
					continue
				}
				seen[phrase] = true
				slices.Sort(set)
				var names []string
				for _, k := range slices.Compact(set) {
					names = append(names, tools[k].Name)
				}
				out = append(out, RepeatedPhrase{Phrase: phrase, Tools: names})
			}
		}
	}
	return out
}

// checkRepeatedProse reports phrases shared by tools: any such phrase, or
// on a PDPP surface those about cross-tool topics (connection_id recovery,
// paging, event delivery), whose place is the instructions.
func checkRepeatedProse(tools []*mcp.Tool, l *Limits) Check {
	minChars := l.minChars()
	var found []string
	for _, p := range RepeatedPhrases(tools, minChars) {
		if !l.PDPP {
			found = append(found, fmt.Sprintf("in %s: %q", strings.Join(p.Tools, ", "), p.Phrase))
			continue
		}
		for _, topic := range proseTopics {
			if topic.in(p.Phrase) {
				found = append(found, fmt.Sprintf("%s guidance in %s: %q", topic.name, strings.Join(p.Tools, ", "), p.Phrase))
				break
			}
		}
	}
	msg := fmt.Sprintf("text of %d+ characters is repeated across tools; say it once (in the server instructions, if every tool needs it) and keep each tool's text short", minChars)
	if l.PDPP {
		msg = fmt.Sprintf("cross-tool guidance of %d+ characters is repeated across tools; say it once in the server instructions and keep each tool's text short", minChars)
	}
	return tolerated("prose.repeated", "prose.max_repeated_findings", "findings", found, l.Prose.MaxRepeatedFindings, msg)
}

// wordRune reports whether r continues a word (identifiers included).
func wordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// wholeWords returns text[from:to] without a word cut at either end and
// without leading punctuation, so a reported phrase reads as prose. Should
// nothing be left, the raw run is returned.
func wholeWords(text []rune, from, to int) string {
	i, j := from, to
	if i > 0 && wordRune(text[i-1]) {
		for i < j && wordRune(text[i]) {
			i++
		}
	}
	for i < j && !wordRune(text[i]) {
		i++
	}
	if j < len(text) && wordRune(text[j]) {
		for j > i && wordRune(text[j-1]) {
			j--
		}
	}
	for j > i && text[j-1] == ' ' {
		j--
	}
	if i >= j {
		return string(text[from:to])
	}
	return string(text[i:j])
}
