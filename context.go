package matrixgen

import (
	"fmt"
	"strconv"
	"strings"
)

// TokensPerK is how many tokens a "K" stands for in a context label. The seed
// and every engine's --max-model-len use binary thousands: 8K = 8,192 tokens.
const TokensPerK = 1024

// ContextLabel names a context length the way published matrices do: whole multiples
// of 1,024 tokens as "8K" or "1019K", anything else as the plain count.
// 1,043,456 tokens is "1019K", not "1M", because it is what the server fit.
func ContextLabel(tokens int) string {
	if tokens >= TokensPerK && tokens%TokensPerK == 0 {
		return strconv.Itoa(tokens/TokensPerK) + "K"
	}
	return strconv.Itoa(tokens)
}

// ParseContext reads a context label ("8K", "1019k", "1M") or a plain token
// count ("8192"). M is 1,024 K.
func ParseContext(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(t, "K"), strings.HasSuffix(t, "k"):
		mult, t = TokensPerK, t[:len(t)-1]
	case strings.HasSuffix(t, "M"), strings.HasSuffix(t, "m"):
		mult, t = TokensPerK*TokensPerK, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 || n > maxContextTokens/mult {
		return 0, fmt.Errorf("context %q: want a positive token count or a label like 8K or 1M", s)
	}
	return n * mult, nil
}

// maxContextTokens bounds contexts well above any model's window (1G tokens)
// so that arithmetic on them cannot overflow.
const maxContextTokens = 1 << 30
