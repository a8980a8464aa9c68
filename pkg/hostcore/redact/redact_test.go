package redact

import (
	"strings"
	"testing"
)

// Realistic-looking fakes: the right shape, never real credentials.
const (
	ghp    = "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"
	ghPAT  = "github_pat_11ABCDEFG0123456789abc_defGHIjklMNOpqrSTUvwxYZ0123456789abcdefghijklmnopqrstuv"
	glpat  = "glpat-xYz12AbC34dEf56GhI78jK"
	xoxb   = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	stripe = "sk_live_51HqLyjWDarjtT1zdp7dcXAMPLEk3l"
	openai = "sk-proj-AbCdEf0123456789GhIjKlMnOpQrStUvWxYz"
	anthr  = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdEFGH"
	akia   = "AKIAIOSFODNN7EXAMPLE"
	aiza   = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
	npmTok = "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	pypi   = "pypi-AgEIcHlwaS5vcmcCJGUzNzQ1YjM0LTY5MDItNGY3Zi1hZGYxLTNkNzM2NDY5Y2I0OQ"
	hf     = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	vault  = "hvs.CAESIJvXvTrMoqFWcDTNpLkqyWoAbCdEfGhIjKlMnOp"
	jwt    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

func TestString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// provider tokens
		{"github classic", "token " + ghp + " leaked", "token [REDACTED] leaked"},
		{"github fine-grained", "GH=" + ghPAT, "GH=[REDACTED]"},
		{"github app tokens", "ghs_" + strings.Repeat("a1", 18) + " gho_" + strings.Repeat("Z9", 18), "[REDACTED] [REDACTED]"},
		{"gitlab", "use " + glpat + ".", "use [REDACTED]."},
		{"slack", "slack: " + xoxb, "slack: [REDACTED]"},
		{"stripe", "Stripe.api_key = '" + stripe + "'", "Stripe.api_key = '[REDACTED]'"},
		{"stripe test and restricted", "sk_test_4eC39HqLyjWDarjtT1zdp7dc rk_live_abcdefghij0123", "[REDACTED] [REDACTED]"},
		{"openai", "OPENAI " + openai, "OPENAI [REDACTED]"},
		{"openai legacy", "sk-" + strings.Repeat("A1b2", 12), "[REDACTED]"},
		{"anthropic", "x-api-key header: " + anthr, "x-api-key header: [REDACTED]"},
		{"aws access key", "aws_access_key_id = " + akia, "aws_access_key_id = [REDACTED]"},
		{"aws sts key", "ASIAY34FZKBOKMUTVV7A in use", "[REDACTED] in use"},
		{"google", "key=" + aiza + "&q=1", "key=[REDACTED]&q=1"},
		{"npm", "//registry.npmjs.org/:_authToken=" + npmTok, "//registry.npmjs.org/:_authToken=[REDACTED]"},
		{"pypi", "password: " + pypi, "password: [REDACTED]"},
		{"hugging face", "HF " + hf, "HF [REDACTED]"},
		{"vault", "VAULT " + vault + " ok", "VAULT [REDACTED] ok"},
		{"google oauth", "ya29.a0AfH6SMBx3kqLmNoPqRsTuVwXyZ012345 expires", "[REDACTED] expires"},
		{"jwt", "session " + jwt + " end", "session [REDACTED] end"},
		// URLs
		{"url password", "git clone https://alice:s3cr3t-P4ss@github.com/org/repo.git", "git clone https://alice:[REDACTED]@github.com/org/repo.git"},
		{"url token user", "https://x-access-token:" + ghp + "@github.com/o/r", "https://x-access-token:[REDACTED]@github.com/o/r"},
		{"url empty user", "redis://:hunter2@cache:6379/0", "redis://:[REDACTED]@cache:6379/0"},
		{"db url", `DATABASE_URL="postgres://app:pa55w0rd@db.internal:5432/app?sslmode=disable"`, `DATABASE_URL="postgres://app:[REDACTED]@db.internal:5432/app?sslmode=disable"`},
		// Authorization
		{"bearer", "Authorization: Bearer abc.def-ghi_123", "Authorization: Bearer [REDACTED]"},
		{"basic", "authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "authorization: Basic [REDACTED]"},
		{"token scheme", `curl -H "Authorization: token ` + ghp + `" https://api.github.com`, `curl -H "Authorization: token [REDACTED]" https://api.github.com`},
		{"json header", `{"Authorization": "Bearer xyz123"}`, `{"Authorization": "Bearer [REDACTED]"}`},
		{"no scheme", "Proxy-Authorization: dXNlcjpwYXNz", "Proxy-Authorization: [REDACTED]"},
		{"aws sigv4", "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
			"Authorization: AWS4-HMAC-SHA256 [REDACTED]"},
		// settings
		{"env", "GITHUB_TOKEN=abc123def456", "GITHUB_TOKEN=[REDACTED]"},
		{"export", "export DB_PASSWORD='correct horse battery'", "export DB_PASSWORD='[REDACTED]'"},
		{"dotenv spaces", "client_secret = s3cr3t!value", "client_secret = [REDACTED]"},
		{"yaml", "  api_key: 0123456789abcdef", "  api_key: [REDACTED]"},
		{"json", `{"user": "bob", "password": "hunter2", "apiKey": "k-123"}`, `{"user": "bob", "password": "[REDACTED]", "apiKey": "[REDACTED]"}`},
		{"json compact", `{"client_secret":"abc","x":1}`, `{"client_secret":"[REDACTED]","x":1}`},
		{"json escaped quote", `{"token": "ab\"cd", "n": 2}`, `{"token": "[REDACTED]", "n": 2}`},
		{"header style", "X-Api-Key: 9f8e7d6c5b4a", "X-Api-Key: [REDACTED]"},
		{"query string", "GET /cb?code=1&access_token=ya29.a0AfH6SM&state=x", "GET /cb?code=1&access_token=[REDACTED]&state=x"},
		{"flag equals", "mysql --password=hunter2 -u root", "mysql --password=[REDACTED] -u root"},
		{"flag space", "vault login --token s.abcdefghijkl --method=token", "vault login --token [REDACTED] --method=token"},
		{"flag quoted", `tool --api-key "abc def" run`, `tool --api-key "[REDACTED]" run`},
		{"private_key setting", "PRIVATE_KEY=MIIEvQIBADANBg", "PRIVATE_KEY=[REDACTED]"},
		{"credentials", "credentials: user:pass", "credentials: [REDACTED]"},
		{"go literal", `token := "abc123"`, `token := "[REDACTED]"`},
		{"ruby hash", `{ secret: 'xyz', :password => "p" }`, `{ secret: '[REDACTED]', :password => "[REDACTED]" }`},
		{"powershell", `$env:API_KEY = "abc"`, `$env:API_KEY = "[REDACTED]"`},
		{"vault legacy token in env", "VAULT_TOKEN=s.AbCdEf123456", "VAULT_TOKEN=[REDACTED]"},
		{"dotted env value", "DB_PASSWORD=my.pass", "DB_PASSWORD=[REDACTED]"},
		{"env constant-looking value", "API_KEY=ABC_DEF", "API_KEY=[REDACTED]"},
		{"ini spaced", "password = hunter2", "password = [REDACTED]"},
		{"numeric pin", "PIN_PASSWORD=1234", "PIN_PASSWORD=[REDACTED]"},
		{"form body", "client_secret=abc123&grant_type=client_credentials", "client_secret=[REDACTED]&grant_type=client_credentials"},
		{"connection string", "Server=db;User Id=sa;Password=hunter2;", "Server=db;User Id=sa;Password=[REDACTED];"},
		{"dotted setting", "spring.datasource.password=s3cret", "spring.datasource.password=[REDACTED]"},
		{"generated password", "Your new password: Xk7#pq2z", "Your new password: [REDACTED]"},
		{"yaml after indent", "db:\n  password: hunter\n", "db:\n  password: [REDACTED]\n"},
		{"crlf kept", "PASSWORD=x\r\nok\r\n", "PASSWORD=[REDACTED]\r\nok\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
			if b := string(Bytes([]byte(tt.in))); b != tt.want {
				t.Errorf("Bytes = %q", b)
			}
		})
	}
}

// Negatives: ordinary prose and code keep every byte.
func TestStringKeepsOrdinaryText(t *testing.T) {
	for _, in := range []string{
		"The tokenizer splits input into tokens; see https://example.com/docs for details.",
		"tokenizer := x",
		"tok := tokenizer.Next()",
		"token := lexer.NextToken()",
		"token = get_token(request)",
		"password = os.environ[\"DB_PASSWORD\"]",
		"password: ${DB_PASSWORD}",
		"API_KEY=$API_KEY ./run.sh",
		`headers = {"token": ""}`,
		"if token == nil {",
		"if password != expected {",
		"max_tokens: 4096",
		"MAX_TOKENS=2048",
		"num_tokens = 12",
		"func (p *Parser) token() Token { return p.tok }",
		"def login(username: str, password: str) -> bool:",
		"  apiKey?: string;",
		"secretary = 'Joan'",
		"secrets: inherit",
		"password: password",
		"token = newToken",
		"credentials: cfg.Credentials",
		"passwd := readPasswd()",
		"a task-list-item-check is fine, as is sk-short",
		"ASIA is a continent; AKIA alone is not a key",
		"eyJ alone is not a JWT",
		"https://example.com:8080/path?q=1",
		"user@example.com wrote: see ssh://git@github.com/org/repo",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"ghp_tooshort and gho_ and xoxb-1",
		"The Authorization header is required.",
		`t.Errorf("bad token: got %s, expected %s", tok, token.LBRACE)`,
		"token.ADD, token.NOT: // unary operators",
		`encodeUserPassword:   "encodeUserPassword",`,
		"password: # set below",
		"_    token = iota",
		"CreateImportStubPltToken = -2",
		"SYS_MEMFD_SECRET            = 447",
		"TOKEN_WRITE = STANDARD_RIGHTS_WRITE |",
		`"runtime/secret.dec":   {"runtime/secret"},`,
		`stmt := &Line{Token: []string{"go", version}}`,
		`"Authorization": []string{`,
		`"proxy-authorization":         49,`,
		"{Certificate: list, PrivateKey: key}}",
		"token.XOR: allInteger,",
		`t.Fatalf("enc.EncodeToken: Unable to encode token (%#v), %v", tok, err)`,
		"password: []byte(\"asdf\"),",
		`"Proxy-Authorization": true,`,
		"d.nextToken = t",
		"Secret: Bug4Secret{1},",
		"login(user, password=self.password)",
		"DB_PASSWORD=$DB_PASSWORD_FROM_VAULT",
	} {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want unchanged", in, got)
		}
	}
}

func TestPrivateKeyBlocks(t *testing.T) {
	body := "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
	tests := []struct{ name, in, want string }{
		{"rsa block", "before\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nafter\n",
			"before\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----\nafter\n"},
		{"crlf block", "-----BEGIN PRIVATE KEY-----\r\nAAAA\r\nBBBB\r\n-----END PRIVATE KEY-----\r\n",
			"-----BEGIN PRIVATE KEY-----\r\n[REDACTED]\r\n-----END PRIVATE KEY-----\r\n"},
		{"openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
			"-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED]\n-----END OPENSSH PRIVATE KEY-----"},
		{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n",
			"-----BEGIN PGP PRIVATE KEY BLOCK-----\n[REDACTED]\n-----END PGP PRIVATE KEY BLOCK-----\n"},
		{"encrypted, indented", "  key: |\n    -----BEGIN ENCRYPTED PRIVATE KEY-----\n    MIIF\n    -----END ENCRYPTED PRIVATE KEY-----\n  next: 1\n",
			"  key: |\n    -----BEGIN ENCRYPTED PRIVATE KEY-----\n[REDACTED]\n-----END ENCRYPTED PRIVATE KEY-----\n  next: 1\n"},
		{"json one line", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n-----END PRIVATE KEY-----\n", "client_email": "a@b.iam.gserviceaccount.com"}`,
			`{"private_key": "[REDACTED]", "client_email": "a@b.iam.gserviceaccount.com"}`},
		{"unterminated", "log\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\nstill key\n",
			"log\n-----BEGIN EC PRIVATE KEY-----\n[REDACTED]\n"},
		{"two blocks", "-----BEGIN PRIVATE KEY-----\nA\n-----END PRIVATE KEY-----\nmid " + ghp + "\n-----BEGIN PRIVATE KEY-----\nB\n-----END PRIVATE KEY-----\n",
			"-----BEGIN PRIVATE KEY-----\n[REDACTED]\n-----END PRIVATE KEY-----\nmid [REDACTED]\n-----BEGIN PRIVATE KEY-----\n[REDACTED]\n-----END PRIVATE KEY-----\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q", again)
			}
			if w := viaWriter(tt.in, []int{1, 7, 3}); w != got {
				t.Errorf("writer %q", w)
			}
		})
	}
}

// Every rule's match must hold a needle, or String's prefilter would skip
// a line the rules would change. Check it on every rule's test inputs.
func TestNeedleInvariant(t *testing.T) {
	samples := []string{ghp, ghPAT, glpat, xoxb, stripe, openai, anthr, akia, aiza, npmTok, pypi, hf, vault, jwt,
		"https://u:p@h", "Authorization: x", "AWS4-HMAC-SHA256 a", "--Api-Key v", "pRiVaTe-KeY=v", "ACCESSKEY=v",
		"Credentials=v", "passwd=v", "SECRET=v", "xapp-1-ABCDEFGHIJKL", "whsec_" + strings.Repeat("a", 24),
		"SG." + strings.Repeat("a", 16) + "." + strings.Repeat("b", 16), "shpat_" + strings.Repeat("a", 32),
		"dop_v1_" + strings.Repeat("a", 64), "ya29." + strings.Repeat("a", 24), "hvb." + strings.Repeat("a", 24), "glrt-" + strings.Repeat("a", 20)}
	// The prefilter looks at every other byte: every needle must be found
	// at either parity, at a line's start, middle and end.
	for _, n := range needles {
		text := n.text
		if n.fold {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
		for _, in := range []string{text, "x" + text, "xy" + text + "z", "a\nb" + text + "\nc", "ab\n" + text} {
			if len(dirtyLines(in)) != 1 || len(dirtyLines([]byte(in))) != 1 {
				t.Errorf("needle %q not found in %q", n.text, in)
			}
		}
	}
	for _, s := range samples {
		if redactLine(s) == s {
			t.Errorf("sample %q is not redacted", s)
		}
		if len(dirtyLines(s)) == 0 {
			t.Errorf("sample %q has no needle", s)
		}
	}
}
