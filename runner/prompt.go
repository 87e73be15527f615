package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// vocabulary is the prompt factory's word list: common English, enough for
// text that reads as prose and does not repeat.
var vocabulary = strings.Fields(`time year people way day man thing woman life child world school state family
student group country problem hand part place case week company system program question work government
number night point home water room mother area money story fact month lot right study book eye job word
business issue side kind head house service friend father power hour game line end member law car city
community name president team minute idea kid body information back parent face others level office door
health person art war history party result change morning reason research girl guy moment air teacher force
education foot boy age policy process music market sense nation plan college interest death experience effect
class control care field development role effort rate heart drug show leader light voice wife police mind
price report decision son view relationship town road arm difference value building action model season
society tax director position player record paper space ground form event official matter center couple site
project activity star table need court oil situation cost industry figure street image phone data picture
practice piece land product doctor wall patient worker news test movie north love support technology step baby
computer type attention film tree source organization hair window evidence population truth song river garden
bridge harbour lantern meadow orchard island valley mountain forest village market letter journey winter summer
walked carried found opened kept watched remembered wondered built painted followed gathered listened crossed
quiet bright narrow ancient gentle heavy distant careful sudden patient curious silver golden wooden broken
slowly quickly often never always early late together alone almost already perhaps nearly`)

// proseWords returns words of deterministic prose for seed, every sentence
// drawn afresh: repeated padding invites a model to loop.
func proseWords(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 0x9105e))
	out := make([]string, 0, n)
	for len(out) < n {
		length := 6 + rng.IntN(17)
		for i := 0; i < length && len(out) < n; i++ {
			w := vocabulary[rng.IntN(len(vocabulary))]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			if i == length-1 {
				w += "."
			}
			out = append(out, w)
		}
	}
	return out
}

// tokenizer counts prompt tokens as the server will: the engine's own
// counter (engine.counter) where it has one, else calibration on usage.
type tokenizer interface {
	count(ctx context.Context, content string) (int, error)
}

// heads are the first line of a context's prompt: words no other prompt of
// the run begins with. The measured prompt starts with measured; those
// sent to find its length (usage calibration) with calibration, the same
// words in another order, so its prefill is a cold one; the prefill's
// warm-up and repeats with fresh heads, further orders of the same words.
type heads struct {
	measured, calibration string
	words                 []string
}

// headWords is how many words a head has: enough that two runs, or two
// attempts of one run, never begin alike.
const headWords = 8

// freshHeads is how many fresh heads a context has: one for each word
// neither measured nor calibration begins with.
const freshHeads = headWords - 2

// newHeads picks the words of a context's heads from nonce, which differs
// from process to process, so a resumed or repeated run starts afresh too.
func newHeads(nonce uint64, context int) heads {
	rng := rand.New(rand.NewPCG(nonce, uint64(context)))
	perm := rng.Perm(len(vocabulary))[:headWords]
	words := make([]string, headWords)
	for i, j := range perm {
		words[i] = vocabulary[j]
	}
	h := heads{words: words}
	h.measured, h.calibration = h.rotated(0), h.rotated(1)
	return h
}

// rotated is the head whose words start at the k-th: a first word of its own.
func (h heads) rotated(k int) string {
	return strings.Join(append(slices.Clone(h.words[k:]), h.words[:k]...), " ") + ".\n\n"
}

// fresh is the k-th fresh head (0 ≤ k < freshHeads).
func (h heads) fresh(k int) string { return h.rotated(2 + k) }

// prefills reports whether counting a prompt with tok sends it to the
// server as a request, which leaves it in the server's prompt cache.
func prefills(tok tokenizer) bool {
	_, ok := tok.(usageTokenizer)
	return ok
}

// exactPrompt builds a user message of exactly n prompt tokens as the
// server counts them; it reports the count reached (n unless the tokenizer
// cannot land on it) and whether it is the prompt's own (exact).
func exactPrompt(ctx context.Context, tok tokenizer, n int, h heads, seed uint64) (prompt string, count int, exact bool, err error) {
	head := h.measured
	if prefills(tok) {
		head = h.calibration
	}
	overhead, err := tok.count(ctx, strings.TrimSpace(head))
	if err != nil {
		return "", 0, false, err
	}
	if overhead >= n {
		return "", 0, false, fmt.Errorf("a %d-token prompt is shorter than the chat template and the prompt's first line (%d tokens)", n, overhead)
	}
	// The sample stays well inside n: a server with a small context (Ollama's
	// num_ctx) would cut a longer one silently and spoil the estimate.
	sampleWords := min(2000, max(n/4, 16))
	sample := proseWords(seed, sampleWords)
	sampleCount, err := tok.count(ctx, head+strings.Join(sample, " "))
	if err != nil {
		return "", 0, false, err
	}
	perWord := max(float64(sampleCount-overhead)/float64(sampleWords), 0.25)
	guess := int(float64(n-overhead)/perWord) + 16
	words := proseWords(seed, guess*5/4+64)
	body := func(w int) string { return strings.Join(words[:w], " ") }
	text := func(w int) string { return head + body(w) }
	// Search the largest word count whose prompt is at most n tokens, first
	// in a bracket around the estimate (a few calls), widening if it misses.
	best, bestCount := 0, overhead
	slack := guess/50 + 32
	lo, hi := max(guess-slack, 0), min(guess+slack, len(words))
	if c, err := tok.count(ctx, text(lo)); err != nil {
		return "", 0, false, err
	} else if c > n {
		lo = 0
	} else {
		best, bestCount = lo, c
	}
	if c, err := tok.count(ctx, text(hi)); err != nil {
		return "", 0, false, err
	} else if c <= n {
		lo, best, bestCount = hi, hi, c
		hi = len(words)
	}
	for lo <= hi {
		mid := (lo + hi) / 2
		c, err := tok.count(ctx, text(mid))
		if err != nil {
			return "", 0, false, err
		}
		if c <= n {
			best, bestCount = mid, c
			lo = mid + 1
		} else {
			hi = mid - 1
		}
		if c == n {
			break
		}
	}
	tail := body(best)
	// Tokenizers merge across word boundaries; close the last gap with
	// single letters, each usually a token of its own.
	for i := 0; bestCount < n && i < 16; i++ {
		c, err := tok.count(ctx, head+tail+" a")
		if err != nil {
			return "", 0, false, err
		}
		if c > n {
			break
		}
		tail, bestCount = tail+" a", c
	}
	return h.measured + tail, bestCount, !prefills(tok), nil
}

// templatedTokenizer counts plain text with a server's own route and adds
// the chat template's tokens, measured once on a request's usage.
type templatedTokenizer struct {
	plain    func(ctx context.Context, text string) (int, error)
	overhead int
}

// templatedCounter is an engine's counter by a templatedTokenizer of
// route (plain); false when either count fails.
func templatedCounter(ctx context.Context, c *client, route string, plain func(ctx context.Context, text string) (int, error)) (tokenizer, string, bool) {
	const probe = "Say hello."
	n, err := plain(ctx, probe)
	if err != nil {
		return nil, "", false
	}
	total, err := usageTokenizer{c}.count(ctx, probe)
	if err != nil {
		return nil, "", false
	}
	t := templatedTokenizer{plain: plain, overhead: total - n}
	return t, fmt.Sprintf("%s plus the chat template's %d tokens (measured on usage)", route, t.overhead), true
}

func (t templatedTokenizer) count(ctx context.Context, content string) (int, error) {
	n, err := t.plain(ctx, content)
	return n + t.overhead, err
}

// usageTokenizer is the last resort for servers that cannot tokenize: it
// sends the prompt asking for one token and reads usage.prompt_tokens.
type usageTokenizer struct{ c *client }

// usageCountTimeout bounds one count by calibration: a prompt's prefill.
const usageCountTimeout = 30 * time.Minute

func (t usageTokenizer) count(ctx context.Context, content string) (int, error) {
	obs := t.c.stream(ctx, chatRequest{prompt: content, maxTokens: 1}, usageCountTimeout, hooks{})
	if obs.err != nil {
		return 0, obs.err
	}
	if obs.promptTokens == 0 {
		return 0, errors.New("the server reports no usage.prompt_tokens, so prompt lengths cannot be made exact")
	}
	return obs.promptTokens, nil
}
