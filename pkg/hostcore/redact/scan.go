package redact

import (
	"math/bits"

	"github.com/pi-cli/pi/internal/ascii"
)

// The prefilter: a line can only need redacting if it holds one of these
// needles (every rule's match contains one, an invariant the tests check).
// One pass over the text with two 256-entry tables finds them, so text
// without secrets costs about a nanosecond a byte and no allocation.

// needle kinds say which rules a needle can trigger.
const (
	kindKeyword = iota // secret-named settings: rx().reFlag, rx().reAssign
	kindAuth           // rx().reAuth, rx().reAWS4
	kindURL            // rx().reURL
	kindToken          // rx().reToken
	kindJWT            // rx().reJWT
	kindKey            // private-key blocks
)

type needle struct {
	text string
	fold bool // ASCII case-insensitive
	kind int
}

var needles = []needle{
	{"secret", true, kindKeyword}, {"passw", true, kindKeyword}, {"token", true, kindKeyword},
	{"api_key", true, kindKeyword}, {"apikey", true, kindKeyword}, {"api-key", true, kindKeyword},
	{"private_key", true, kindKeyword}, {"privatekey", true, kindKeyword}, {"private-key", true, kindKeyword},
	{"access_key", true, kindKeyword}, {"accesskey", true, kindKeyword}, {"access-key", true, kindKeyword},
	{"credentials", true, kindKeyword},
	{"authorization", true, kindAuth}, {"aws4-hmac", true, kindAuth},
	{"://", false, kindURL},
	{"ghp_", false, kindToken}, {"gho_", false, kindToken}, {"ghu_", false, kindToken},
	{"ghs_", false, kindToken}, {"ghr_", false, kindToken}, {"github_pat_", false, kindToken},
	{"glpat-", false, kindToken}, {"glptt-", false, kindToken}, {"gldt-", false, kindToken},
	{"glrt-", false, kindToken}, {"xox", false, kindToken}, {"xapp-", false, kindToken},
	{"sk_live_", false, kindToken}, {"sk_test_", false, kindToken}, {"rk_live_", false, kindToken},
	{"rk_test_", false, kindToken}, {"whsec_", false, kindToken}, {"sk-", false, kindToken},
	{"AKIA", false, kindToken}, {"ASIA", false, kindToken}, {"AIza", false, kindToken},
	{"npm_", false, kindToken}, {"pypi-", false, kindToken}, {"hf_", false, kindToken},
	{"hvs.", false, kindToken}, {"hvb.", false, kindToken}, {"SG.", false, kindToken},
	{"shp", false, kindToken}, {"dop_v1_", false, kindToken}, {"ya29.", false, kindToken},
	{"eyJ", false, kindJWT},
	{keyMarker, false, kindKey},
}

const keyMarker = "PRIVATE KEY"

// kindMask[k] has the bits of the needles of kind k.
var kindMask [kindKey + 1]uint64

// first, second and third map a byte to the needles whose first (second,
// third) byte it can be: a position is a candidate when the three bitsets
// intersect, which ordinary text rarely makes them do.
var first, second, third [256]uint64

func init() {
	for _, n := range needles {
		if len(n.text) < 3 || len(needles) > 64 {
			panic("redact: needles must be 3+ bytes and at most 64")
		}
	}
	for i, n := range needles {
		bit := uint64(1) << i
		kindMask[n.kind] |= bit
		for pos, tbl := range []*[256]uint64{&first, &second, &third} {
			c := n.text[pos]
			tbl[c] |= bit
			if n.fold {
				tbl[ascii.Lower(c)] |= bit
				tbl[ascii.Upper(c)] |= bit
			}
		}
	}
}

// dirtyLines returns the start offsets of the lines of s that hold a
// needle, in order; nil when none does. It looks at every other position:
// a needle (3+ bytes) at p has its bytes 0-1 at p or its bytes 1-2 at p+1,
// and one of the two is a position looked at.
func dirtyLines[T string | []byte](s T) []int {
	var starts []int
	for i := 0; i+1 < len(s); i += 2 {
		a, b := s[i], s[i+1]
		at, before := first[a]&second[b], second[a]&third[b] // needle at i, at i-1
		if at|before == 0 {
			continue
		}
		if (at == 0 || matchNeedles(s, i, at) == 0) && (before == 0 || i == 0 || matchNeedles(s, i-1, before) == 0) {
			continue
		}
		ls := i
		for ls > 0 && s[ls-1] != '\n' {
			ls--
		}
		starts = append(starts, ls)
		for i < len(s) && s[i] != '\n' { // the rest of the line is dirty anyway
			i++
		}
		i-- // resume at the next line's first byte
	}
	return starts
}

// needleSet returns the bits of the needles found anywhere in s.
func needleSet(s string) uint64 {
	var set uint64
	for i := 0; i+2 < len(s); i++ {
		if m := first[s[i]] & second[s[i+1]] & third[s[i+2]] &^ set; m != 0 {
			set |= matchNeedles(s, i, m)
		}
	}
	return set
}

// matchNeedles returns the bits of the candidate needles m found at s[i:].
func matchNeedles[T string | []byte](s T, i int, m uint64) uint64 {
	var found uint64
	for m != 0 {
		k := bits.TrailingZeros64(m)
		bit := uint64(1) << k
		m &^= bit
		n := needles[k]
		if i+len(n.text) > len(s) {
			continue
		}
		ok := true
		for j := 0; j < len(n.text); j++ {
			c := s[i+j]
			if n.fold {
				c = ascii.Lower(c)
			}
			if c != n.text[j] {
				ok = false
				break
			}
		}
		if ok {
			found |= bit
		}
	}
	return found
}
