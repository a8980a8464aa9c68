package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// renderToolText prints a tool result for a person: the payload on stdout,
// errors and notices on stderr.
func renderToolText(out, errOut io.Writer, res *hostcore.Result) {
	var m map[string]any
	if b, err := json.Marshal(res.Content); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	switch res.Tool {
	case "Read":
		if s, ok := m["content"].(string); ok {
			io.WriteString(out, s)
			if s != "" && !strings.HasSuffix(s, "\n") {
				fmt.Fprintln(out)
			}
		}
	case "Glob":
		for _, p := range list(m["matches"]) {
			fmt.Fprintln(out, p)
		}
	case "Grep":
		for _, x := range list(m["matches"]) {
			mm, _ := x.(map[string]any)
			sep := ":"
			if c, _ := mm["context"].(bool); c {
				sep = "-"
			}
			fmt.Fprintf(out, "%v%s%v%s%v\n", mm["path"], sep, mm["line"], sep, mm["text"])
		}
		for _, p := range list(m["files"]) {
			fmt.Fprintln(out, p)
		}
		for _, x := range list(m["counts"]) {
			mm, _ := x.(map[string]any)
			fmt.Fprintf(out, "%v:%v\n", mm["path"], mm["count"])
		}
	case "Edit":
		if d, ok := m["diff"].(string); ok {
			io.WriteString(out, d)
		}
	case "Write":
		if p, ok := m["path"].(string); ok {
			verb := "wrote"
			if c, _ := m["created"].(bool); c {
				verb = "created"
			}
			fmt.Fprintf(out, "%s %s (%v bytes)\n", verb, p, m["bytes"])
		}
	case "Bash":
		if s, ok := m["stdout"].(string); ok {
			io.WriteString(out, s)
		}
		if s, ok := m["stderr"].(string); ok {
			io.WriteString(errOut, s)
		}
	default:
		if res.Content != nil {
			b, _ := json.MarshalIndent(res.Content, "", "  ")
			fmt.Fprintln(out, string(b))
		}
	}
	if n, ok := m["notice"].(string); ok && n != "" {
		fmt.Fprintln(errOut, "pi: "+n)
	}
	if t, ok := m["truncated"].(bool); ok && t {
		if no, ok := m["nextOffset"]; ok {
			fmt.Fprintf(errOut, "pi: truncated; continue with --offset %v\n", no)
		} else {
			fmt.Fprintln(errOut, "pi: output truncated")
		}
	}
	if res.Review != nil {
		if rv, ok := res.Review.(interface{ Summary() string }); ok {
			fmt.Fprintln(errOut, "pi: "+rv.Summary())
		}
	}
	if res.IsError {
		fmt.Fprintf(errOut, "pi: %s: %s\n", res.ErrorCode, res.Message)
	}
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
