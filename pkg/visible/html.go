package visible

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Bounds of the HTML reading. Past them the rest of the text is left as it
// is (its hidden characters are still marked).
const (
	// maxHTMLBytes: longer text is not read as HTML.
	maxHTMLBytes = 1 << 20
	// maxHTMLTokens bounds the tokens read.
	maxHTMLTokens = 50000
	// htmlQuoteChars bounds the text a mark quotes from a hidden part.
	htmlQuoteChars = 200
	// htmlHowChars bounds the reason a mark gives (the hiding declaration).
	htmlHowChars = 40
)

// span is a part of a text, [start, end) in bytes, that a mail reader would
// not show, and its mark.
type span struct {
	start, end int
	mark       string
}

// mayHide reports whether s may be HTML with parts a reader would not show:
// it has a comment, or a tag that names hidden, style, script or template
// (in any case). Each byte is looked at once; search highlights (<mark>)
// and addresses in angle brackets (<a@b.example>) do not qualify.
func mayHide(s string) bool {
	if len(s) > maxHTMLBytes {
		return false
	}
	for rest := s; ; {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		if strings.HasPrefix(rest, "!--") {
			return true
		}
		tag := rest
		if end := strings.IndexByte(rest, '>'); end >= 0 {
			tag, rest = rest[:end], rest[end+1:]
		} else {
			rest = ""
		}
		for _, w := range [...]string{"hidden", "style", "script", "template"} {
			if containsFold(tag, w) {
				return true
			}
		}
	}
}

// containsFold reports whether s contains word (lower-case ASCII) in any
// case.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if s[i]|0x20 != word[0] {
			continue
		}
		j := 1
		for j < len(word) && s[i+j]|0x20 == word[j] {
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}

// voidElements have no content: a hidden one is its tag alone.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true}

// unshown are elements whose content no reader shows as text.
var unshown = map[string]bool{"style": true, "script": true, "template": true}

// htmlSpans returns the parts of s that a mail reader would not show, in
// order: comments, elements hidden by the hidden attribute or by an inline
// style (display:none, visibility:hidden, opacity:0, font-size:0,
// color:transparent, mso-hide:all, a zero width or height with
// overflow:hidden), and the content of style, script and template elements.
// Each becomes one mark quoting, bounded, the text it holds. s is read with
// the HTML tokenizer (golang.org/x/net/html), never parsed into a tree, and
// only as far as the bounds above.
func htmlSpans(s string) []span {
	if !mayHide(s) {
		return nil
	}
	var out []span
	z := html.NewTokenizer(strings.NewReader(s))
	z.SetMaxBuf(maxHTMLBytes)
	pos := 0
	// The hidden element being read: its name, where it starts, how many
	// elements of that name are open inside it, what hides it, its text.
	var (
		open     string
		start    int
		depth    int
		how      string
		text     strings.Builder
		textRest int
	)
	addText := func(t string) {
		if room := htmlQuoteChars*4 - text.Len(); room > 0 {
			if len(t) > room {
				textRest += utf8.RuneCountInString(t[room:])
				t = t[:room]
			}
			text.WriteString(t)
		} else {
			textRest += utf8.RuneCountInString(t)
		}
	}
	closeSpan := func(end int) {
		out = append(out, span{start, end, htmlMark("<"+open+">", how, text.String(), textRest)})
		open, text, textRest = "", strings.Builder{}, 0
	}
	for n := 0; n < maxHTMLTokens; n++ {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tokStart := pos
		pos += len(z.Raw())
		switch tt {
		case html.CommentToken:
			if open != "" {
				continue
			}
			c := string(z.Text())
			q, rest := c, 0
			if len(q) > htmlQuoteChars*4 {
				q, rest = q[:htmlQuoteChars*4], utf8.RuneCountInString(q[htmlQuoteChars*4:])
			}
			out = append(out, span{tokStart, pos, htmlMark("comment", "", q, rest)})
		case html.TextToken:
			if open != "" {
				addText(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if open != "" {
				if tag == open && tt == html.StartTagToken {
					depth++
				}
				continue
			}
			why := ""
			if unshown[tag] {
				why = "not shown"
			} else if hasAttr {
				why = hiddenBy(z)
			}
			if why == "" {
				continue
			}
			if tt == html.SelfClosingTagToken || voidElements[tag] {
				out = append(out, span{tokStart, pos, htmlMark("<"+tag+">", why, "", 0)})
				continue
			}
			open, start, depth, how = tag, tokStart, 1, why
		case html.EndTagToken:
			if open == "" {
				continue
			}
			if name, _ := z.TagName(); string(name) == open {
				if depth--; depth == 0 {
					closeSpan(pos)
				}
			}
		}
	}
	if open != "" {
		// Never closed: a reader hides the rest.
		closeSpan(len(s))
	}
	return out
}

// hiddenBy says what hides the element whose attributes z is at ("" when
// nothing does): the hidden attribute, or the inline style declaration.
func hiddenBy(z *html.Tokenizer) string {
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "hidden":
			return "hidden"
		case "style":
			if d := hidingStyle(string(v)); d != "" {
				return d
			}
		}
		if !more {
			return ""
		}
	}
}

// hidingStyle returns the declaration of an inline style that hides its
// element, or "".
func hidingStyle(style string) string {
	decl := map[string]string{}
	var order []string
	for _, d := range strings.Split(strings.ToLower(style), ";") {
		k, v, ok := strings.Cut(d, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "!important"))
		if _, seen := decl[k]; !seen {
			order = append(order, k)
		}
		decl[k] = v
	}
	clipped := decl["overflow"] == "hidden" || decl["overflow-y"] == "hidden" || decl["overflow-x"] == "hidden"
	for _, k := range order {
		v := decl[k]
		hides := false
		switch k {
		case "display":
			hides = v == "none"
		case "visibility":
			hides = v == "hidden" || v == "collapse"
		case "opacity", "font-size":
			hides = zeroLength(v)
		case "color":
			hides = v == "transparent"
		case "mso-hide":
			hides = v == "all"
		case "width", "height", "max-width", "max-height":
			hides = clipped && zeroLength(v)
		}
		if hides {
			return k + ":" + v
		}
	}
	return ""
}

// zeroLength reports a CSS number or length that is zero (0, 0px, 0.0em, 0%).
func zeroLength(v string) bool {
	n := strings.TrimRight(v, "abcdefghijklmnopqrstuvwxyz%")
	f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	return err == nil && f == 0
}

// htmlMark is the mark of a hidden part: what it is, what hides it, and a
// bounded quote of its text (rest counts the code points beyond what was
// collected). Nothing inside it can end it or start another mark: hidden
// characters in the quote are named in brackets, and brackets of the text
// become plain ones.
func htmlMark(what, how, text string, rest int) string {
	var b strings.Builder
	w, _ := cutPlain(inside(String(what)), htmlHowChars)
	b.WriteString(hiddenPrefix + "html " + w)
	if how != "" {
		h, _ := cutPlain(inside(String(how)), htmlHowChars)
		b.WriteString(" (" + h + ")")
	}
	quote := strings.Join(strings.Fields(text), " ")
	if quote != "" {
		q, n, _ := AppendPrefix(nil, quote, htmlQuoteChars)
		rest += utf8.RuneCountInString(quote) - n
		b.WriteString(": “" + inside(string(q)) + "”")
	}
	if rest > 0 {
		b.WriteString(cutNote + strconv.Itoa(rest) + " more")
	}
	b.WriteString(Close)
	return b.String()
}

// inside makes rendered text safe inside a mark: its own marks' brackets,
// and any other, become plain ones, and its double quotes single ones.
var inside = strings.NewReplacer(Open, "[", Close, "]", "“", "‘", "”", "’").Replace
