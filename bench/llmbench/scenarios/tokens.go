package scenarios

import (
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// o200k is OpenAI's o200k_base encoding (gpt-4o and later), loaded once:
// github.com/tiktoken-go/tokenizer embeds the vocabulary, so counting
// needs no network (its counts equal gpt-tokenizer's, which o200k.mjs
// used before).
var o200k = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.O200kBase) })

// O200kTokens counts the o200k_base tokens of a request body, as a
// tokenizer run over the bytes sent would.
func O200kTokens(body []byte) (int, error) {
	enc, err := o200k()
	if err != nil {
		return 0, fmt.Errorf("o200k tokenizer: %w", err)
	}
	ids, _, err := enc.Encode(string(body))
	if err != nil {
		return 0, fmt.Errorf("o200k tokens: %w", err)
	}
	return len(ids), nil
}
