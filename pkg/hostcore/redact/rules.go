package redact

import (
	"regexp"
	"strings"
	"sync"
)

// keywords make a setting's name secret (case-insensitive).
const keywords = `secret|passw(?:or)?d|token|api[_-]?key|private[_-]?key|access[_-]?key|credentials`

// A quoted value (one line, escapes allowed), or Mask itself so that a
// second pass sees a redacted value whole.
const quoted = `\[REDACTED\]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`

// rules are compiled on first use, not at start-up: most pi calls redact
// only short previews that the trigger scan passes without a regexp, and a
// single-shot process should not pay for compiling them.
type rules struct {
	keyHeader *regexp.Regexp
	keyFooter *regexp.Regexp
	reURL     *regexp.Regexp
	reAuth    *regexp.Regexp
	reAWS4    *regexp.Regexp
	reToken   *regexp.Regexp
	reJWT     *regexp.Regexp
	reFlag    *regexp.Regexp
	reAssign  *regexp.Regexp
	reKeyword *regexp.Regexp
	reIdent   *regexp.Regexp
	reConst   *regexp.Regexp
	reEnvName *regexp.Regexp
	reNumber  *regexp.Regexp
	reExpr    *regexp.Regexp
}

var rx = sync.OnceValue(func() *rules {
	return &rules{
		keyHeader: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`),
		keyFooter: regexp.MustCompile(`-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`),

		// scheme://user:secret@host keeps scheme, user and host.
		reURL: regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.\-]{0,30}://)([^\s:/?#@"'<>\[\]]*):([^\s/?#@"'<>]+)@`),

		// Authorization: <scheme> <credentials>, also in JSON and curl -H forms.
		reAuth: regexp.MustCompile(`(?i)\b((?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?)` +
			`(?:(bearer|basic|token|digest|negotiate|ntlm|bot|apikey|key|sso-key|aws4-hmac-sha256)([ \t]+))?` +
			`(\[REDACTED\]|[^\s"',;]+)`),
		// An AWS SigV4 header carries several parts; hide all of them.
		reAWS4: regexp.MustCompile(`(?i)(aws4-hmac-sha256[ \t]+)([^"'\r\n]*[^"'\s])`),

		// Provider-prefixed tokens; lengths follow the providers' formats, with
		// a minimum long enough that prose and identifiers do not match.
		reToken: regexp.MustCompile(`\b(?:` +
			`gh[pousr]_[A-Za-z0-9]{36,255}\b` +
			`|github_pat_[A-Za-z0-9_]{22,255}\b` +
			`|gl(?:pat|ptt|dt|rt)-[A-Za-z0-9_\-]{20,}` +
			`|xox[abposr]-[A-Za-z0-9\-]{10,}` +
			`|xapp-[0-9]-[A-Za-z0-9\-]{10,}` +
			`|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}` +
			`|whsec_[A-Za-z0-9+/=]{20,}` +
			`|sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}` +
			`|(?:AKIA|ASIA)[A-Z0-9]{16}\b` +
			`|AIza[0-9A-Za-z_\-]{35}` +
			`|npm_[A-Za-z0-9]{36}\b` +
			`|pypi-[A-Za-z0-9_\-]{50,}` +
			`|hf_[A-Za-z0-9]{30,}\b` +
			`|hv[sb]\.[A-Za-z0-9_\-]{20,}` +
			`|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}` +
			`|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b` +
			`|dop_v1_[a-f0-9]{64}\b` +
			`|ya29\.[0-9A-Za-z_\-]{20,}` +
			`)`),

		// JWT: three base64url segments, the header starting {" (eyJ).
		reJWT: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}`),

		// --name value (the --name=value form is an assignment below).
		reFlag: regexp.MustCompile(`(?i)(^|\s)(--?[A-Za-z0-9_\-]*?(?:` + keywords + `)[A-Za-z0-9_\-]*)([ \t]+)` +
			`(` + quoted + `|[^\s"'\-][^\s"']*)`),

		// NAME=value, NAME: value, "name": "value", name := "value", name => 'v'.
		reAssign: regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_.\-])(["']?)` +
			`([A-Za-z0-9_.\-]*?(?:` + keywords + `)[A-Za-z0-9_.\-]*)` +
			`(["']?[ \t]*(?::=|=>|=|:)[ \t]*)` +
			`(` + quoted + `|[^\s"'&;,<>)}\]]+)`),

		reKeyword: regexp.MustCompile(`(?i)` + keywords),
		reIdent:   regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`),
		reConst:   regexp.MustCompile(`^[A-Z][A-Z0-9]*_[A-Z0-9_]*$`),
		reEnvName: regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`),
		reNumber:  regexp.MustCompile(`^[-+]?(?:0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)$`),
		// A member access, index or call: code, not a literal secret.
		reExpr: regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:(?:\.[A-Za-z_$][\w$]*)+|\[)`),
	}
})

// redactLine applies the rules until nothing changes. A pass can expose a
// new match (Mask's brackets make a word boundary where a token used to
// continue), and idempotence is part of the contract; two passes are the
// norm, each only on a line that holds a needle.
func redactLine(s string) string {
	for range 8 {
		next := redactOnce(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// redactOnce applies the single-line rules in an order where each rule
// leaves Mask where later rules expect a value: tokens inside URLs, headers
// and settings are hidden once and the later rule keeps the name.
func redactOnce(s string) string {
	// Run a rule only if the line holds one of its needles: most dirty
	// lines of code mention a token or a key without setting one.
	set := needleSet(s)
	if set&kindMask[kindURL] != 0 && urlUserinfo(s) {
		s = replace(rx().reURL, s, func(s string, m []int) string {
			return s[m[2]:m[3]] + s[m[4]:m[5]] + ":" + Mask + "@"
		})
	}
	if set&kindMask[kindAuth] != 0 {
		s = replace(rx().reAuth, s, func(s string, m []int) string {
			if v := s[m[8]:m[9]]; v != Mask && (strings.ContainsAny(v[:1], "[{(") || isNumber(v) || isLiteral(v)) {
				return s[m[0]:m[1]] // a map entry or a table index, not a header
			}
			return s[m[0]:m[8]] + Mask // keeps name, separator and scheme
		})
		s = replace(rx().reAWS4, s, func(s string, m []int) string {
			return s[m[2]:m[3]] + Mask
		})
	}
	if set&kindMask[kindToken] != 0 {
		s = rx().reToken.ReplaceAllLiteralString(s, Mask)
	}
	if set&kindMask[kindJWT] != 0 {
		s = rx().reJWT.ReplaceAllLiteralString(s, Mask)
	}
	if set&kindMask[kindKeyword] == 0 {
		return s
	}
	assign, flag := settingShapes(s)
	if flag {
		s = replace(rx().reFlag, s, func(s string, m []int) string {
			name, value := s[m[4]:m[5]], s[m[8]:m[9]]
			if ok, _ := secretName(name); !ok || strings.HasPrefix(value, "$") {
				return s[m[0]:m[1]]
			}
			return s[m[0]:m[8]] + maskValue(value)
		})
	}
	if assign {
		s = replace(rx().reAssign, s, func(s string, m []int) string {
			name, sep, value := s[m[6]:m[7]], s[m[8]:m[9]], s[m[10]:m[11]]
			ok, tokenOnly := secretName(name)
			// In a URL query (?name=v&…) the value is data, never code.
			query := m[2] < m[3] && (s[m[2]] == '?' || s[m[2]] == '&')
			if !ok || !query && (keepValue(name, sep, value, s[m[11]:], tokenOnly) || prose(s, m)) {
				return s[m[0]:m[1]]
			}
			return s[m[0]:m[10]] + maskValue(value)
		})
	}
	return s
}

// settingShapes is a cheap gate for rx().reAssign and reFlag: does a keyword sit
// in a name followed by ':' or '=' (assign), or in a name starting with '-'
// followed by a blank (flag)? It accepts at least what the regexps match.
func settingShapes(s string) (assign, flag bool) {
	for i := 0; i+2 < len(s); i++ {
		m := first[s[i]] & second[s[i+1]] & third[s[i+2]] & kindMask[kindKeyword]
		if m == 0 || matchNeedles(s, i, m) == 0 {
			continue
		}
		a, e := i, i
		for a > 0 && isNameChar(s[a-1]) {
			a--
		}
		for e < len(s) && isNameChar(s[e]) {
			e++
		}
		j := e
		if j < len(s) && (s[j] == '"' || s[j] == '\'') {
			j++
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && (s[j] == ':' || s[j] == '=') {
			assign = true
		}
		if s[a] == '-' && e < len(s) && (s[e] == ' ' || s[e] == '\t') {
			flag = true
		}
		i = e
	}
	return assign, flag
}

// urlUserinfo is a cheap gate for reURL: does some "://" start an
// authority holding both ':' and '@'?
func urlUserinfo(s string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], "://")
		if k < 0 {
			return false
		}
		i += k + 3
		colon := false
		for j := i; j < len(s); j++ {
			c := s[j]
			if c == ':' {
				colon = true
			} else if c == '@' {
				if colon {
					return true
				}
				break
			} else if c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '"' || c == '\'' {
				break
			}
		}
	}
}

func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// replace is ReplaceAllStringFunc with the submatch indexes at hand.
func replace(re *regexp.Regexp, s string, f func(s string, m []int) string) string {
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	prev := 0
	for _, m := range ms {
		b.WriteString(s[prev:m[0]])
		b.WriteString(f(s, m))
		prev = m[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

// maskValue masks a value, keeping the quotes of a quoted one.
func maskValue(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[:1] + Mask + v[len(v)-1:]
	}
	return Mask
}

// secretName reports whether a setting's name makes its value secret, and
// whether "token" is the only reason. A keyword followed by more letters of
// the same case is a different word, and one followed by '.' qualifies
// something else: tokens, tokenizer, secretary, MAX_TOKENS, token.ADD are
// not secret names; tokenId, API_TOKEN and db.password are.
func secretName(name string) (ok, tokenOnly bool) {
	tokenOnly = true
	for _, loc := range rx().reKeyword.FindAllStringIndex(name, -1) {
		if loc[1] < len(name) {
			last, next := name[loc[1]-1], name[loc[1]]
			if isLower(last) && isLower(next) || isUpper(last) && isUpper(next) || next == '.' {
				continue // another word, or a qualifier as in token.ADD
			}
		}
		ok = true
		if !strings.EqualFold(name[loc[0]:loc[1]], "token") {
			tokenOnly = false
		}
	}
	return ok, ok && tokenOnly
}

// keepValue reports whether a secret-named setting's value is clearly not a
// secret, so that code stays readable. A quoted value is a literal, hidden
// unless empty, a variable reference or the setting's own name (a label).
// An unquoted one is kept when it is code rather than data:
//   - a reference or structure: $X, %X%, {{x}}, <placeholder>, [..], {..}
//   - a call, member access, index or composite: getToken(), cfg.token,
//     env["X"], Secret{1}
//   - a keyword or type name: null, true, iota, string
//   - the right side of a Go := declaration, or a comment after the colon
//   - a number after a spaced separator (SCM_CREDENTIALS = 0x2) or given
//     to a token count (max_tokens=4096)
//   - an identifier that repeats a keyword (token = newToken), a constant
//     (TOKEN_WRITE = STANDARD_RIGHTS_WRITE), or one that an operator, ',',
//     ')' or '}' follows (PrivateKey: key},), or a single letter after a
//     spaced separator
//
// An environment-style NAME=value (upper-case name, bare '=') is data: only
// a reference ($OTHER) stays. Everything else is masked: for a password, a
// miss costs more than a false positive, so "password = hunter2" is hidden.
func keepValue(name, sep, v, after string, tokenOnly bool) bool {
	if v == Mask {
		return false
	}
	if v[0] == '"' || v[0] == '\'' {
		inner := v[1 : len(v)-1]
		return inner == "" || strings.HasPrefix(inner, "$") || strings.HasPrefix(inner, "{{") ||
			strings.EqualFold(inner, name)
	}
	if sep == "=" && rx().reEnvName.MatchString(name) {
		// An environment variable holds data, whatever it looks like
		// (VAULT_TOKEN=s.AbC… is not a member access); only a reference
		// to another variable stays.
		return strings.ContainsAny(v[:1], "$%") || strings.HasPrefix(v, "{{")
	}
	spaced := strings.HasSuffix(sep, " ") || strings.HasSuffix(sep, "\t")
	switch {
	case strings.Contains(sep, ":="),
		strings.ContainsAny(v[:1], "$%<=*{[("), strings.HasPrefix(v, "//"), strings.HasPrefix(v, "/*"),
		v[0] == '#' && spaced,
		strings.ContainsAny(v, "({["), // a call or a composite literal
		rx().reExpr.MatchString(v),
		isNumber(v) && (tokenOnly || spaced):
		return true
	}
	if isLiteral(v) {
		return true
	}
	if !rx().reIdent.MatchString(v) {
		return false
	}
	if len(v) == 1 && spaced { // d.nextToken = t: a one-letter variable
		return true
	}
	rest := strings.TrimLeft(after, " \t")
	return rx().reKeyword.MatchString(v) || rx().reConst.MatchString(v) ||
		rest != "" && (strings.ContainsAny(rest[:1], ",)}") || spaced && strings.ContainsAny(rest[:1], "|+*/^"))
}

// prose reports a "name: word" phrase in a sentence, as in "bad token:
// got %s" or "EncodeToken: Unable to encode": the separator is a colon,
// the value a plain word, and the name follows a word or the value is
// followed by another. A YAML key starts its line and its value ends it,
// and a generated password has digits or symbols, so those stay masked.
func prose(s string, m []int) bool {
	sep, v := strings.TrimSpace(s[m[8]:m[9]]), s[m[10]:m[11]]
	if sep != ":" { // also refuses a quoted key, whose sep is `":`
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isLetter(v[i]) || i > 0 && isUpper(v[i]) {
			return false
		}
	}
	afterWord := m[2] < m[3] && s[m[2]] == ' ' && m[2] > 0 && isLetter(s[m[2]-1])
	rest := s[m[11]:]
	wordFollows := len(rest) > 1 && rest[0] == ' ' && isLetter(rest[1])
	return afterWord || wordFollows
}

func isLetter(c byte) bool { return isLower(c) || isUpper(c) }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }

// isLiteral: a keyword or type name, which no one uses as a secret.
func isLiteral(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "null", "nil", "none", "undefined", "iota",
		"string", "str", "bytes", "int", "bool", "boolean", "number", "any", "object":
		return true
	}
	return false
}

func isNumber(s string) bool { return rx().reNumber.MatchString(s) }
