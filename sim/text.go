package sim

import "strings"

// words is the simulated model's vocabulary for output text.
var words = strings.Fields(`the a of and to in is that it was for on are as with his they at be this
from have or by one had not but what all were when we there can an your which their said if do will
each about how up out them then she many some so these would other into has more her two like him see
time could no make than first been its who now people my made over did down only way find use may
water long little very after words called just where most know get through back much before go good
new write our used me man too any day same right look think also around another came come work three
word must because does part even place well such here take why things help put years different away
again off went old number great tell men say small every found still between name should home big give
air line set own under read last never us left end along while might next sound below saw something
thought both few those always looked show large often together asked house world going want school
important until form food keep children feet land side without boy once animals life enough took sometimes
four head above kind began almost live page got earth need far hand high year mother light parts country
father let night following picture being study second eyes soon times story boys since white days ever
paper hard near sentence better best across during today others however sure means knew try told young
miles sun ways thing whole hear example heard several change answer room sea against top turned learn
point city play toward five using himself usually`)

// tokenText is the text of output token i of a request: a word chosen by a
// deterministic hash of the request's seed and the position, so output is
// natural-looking, varied and the same on every run; from loopStart on, the
// loop phrase repeated.
func tokenText(seed uint64, i, loopStart int, phrase []string) string {
	w := words[splitmix(seed+uint64(i))%uint64(len(words))]
	if loopStart >= 0 && i >= loopStart && len(phrase) > 0 {
		w = phrase[(i-loopStart)%len(phrase)]
	}
	if i == 0 {
		return w
	}
	return " " + w
}

// splitmix is SplitMix64's finaliser: a cheap, well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
