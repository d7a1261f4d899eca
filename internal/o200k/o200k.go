// Package o200k counts tokens with the o200k_base encoding, the one OpenAI's
// GPT-4o, GPT-4.1, GPT-5 and o-series models use. The encoding ships inside the
// github.com/tiktoken-go/tokenizer module as Go source: nothing is downloaded
// at run time. Other model families (Claude, Gemini) tokenise differently,
// so treat the counts as indicative there; bytes stay the budgeted unit.
package o200k

import (
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizer counts o200k_base tokens.
type Tokenizer struct {
	codec tokenizer.Codec
}

// New loads the encoding (a one-time cost of some tens of milliseconds).
func New() (*Tokenizer, error) {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("o200k_base encoding: %w", err)
	}
	return &Tokenizer{codec: c}, nil
}

// Count returns the number of tokens in text. Invalid UTF-8 is counted as
// its bytes are, the encoder's default.
func (t *Tokenizer) Count(text string) (int, error) {
	n, err := t.codec.Count(text)
	if err != nil {
		return 0, fmt.Errorf("o200k_base: %w", err)
	}
	return n, nil
}

// Name describes the count for reports.
func (t *Tokenizer) Name() string {
	return "o200k_base (GPT-4o/GPT-5 encoding, github.com/tiktoken-go/tokenizer); other model families count differently"
}
