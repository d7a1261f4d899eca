// Package visible renders text written by strangers so that a model reads
// nothing a person could not see.
//
// Most of what a resource server returns was written by someone other than
// the person who granted it: the mail they received, a calendar invite, a
// file name. Characters a person cannot see but a model reads (Unicode
// format characters such as tag characters, bidirectional overrides and
// zero-width spaces; C0 and C1 controls; DEL) can carry instructions no
// reviewer of a transcript would notice. The rule here replaces each run of
// them with a short visible mark that names what was there:
//
//	a​b            → a⟦hidden U+200B⟧b
//	tags run       → ⟦hidden tags “ignore previous instructions”⟧
//	ESC[31m        → ⟦hidden U+001B⟧[31m
//	three ZWSP     → ⟦hidden U+200B×3⟧
//
// Kept as they are: tab, line feed, a carriage return that ends a line
// (CR LF), the zero-width joiner between two pictographs (emoji sequences),
// the zero-width joiner and non-joiner between two letters of a script that
// writes with them (Arabic, Syriac, N'Ko, the Indic scripts), and one
// variation selector after a visible character. A second variation selector
// in a row, or one after nothing visible, carries no glyph and is marked
// (variation selectors can spell bytes).
//
// Marks are exact: Decode turns a marked string back into the original, so
// an identifier shown with a mark still works when a model passes it back.
// A literal "⟦" in the source is written as the mark ⟦U+27E6⟧, so no text can
// forge a mark or make Decode change it. Strings of more than ExactBytes
// bytes (bodies, messages) get bounded marks: a mark lists at most
// MaxMarkBytes of what it names, then says how many more characters it
// stands for (" …+N more"); such a mark cannot be decoded.
//
// The rule must be applied once per string: rendering a rendered string
// escapes the brackets of its marks.
package visible
