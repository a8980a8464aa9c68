package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// envelope is the result envelope of CLI.md for non-tool commands.
type envelope struct {
	OK        bool          `json:"ok"`
	IsError   bool          `json:"isError"`
	ErrorCode hostcore.Code `json:"errorCode,omitempty"`
	Message   string        `json:"message,omitempty"`
	SessionID string        `json:"sessionId,omitempty"`
	Content   any           `json:"content,omitempty"`
}

// outputMode applies --output > PI_OUTPUT > json unless stdout is a terminal.
func (f *Factory) outputMode() string {
	o := f.Flags.Output
	if o == "" {
		o = f.Getenv("PI_OUTPUT")
	}
	switch strings.ToLower(o) {
	case "json":
		return "json"
	case "text":
		return "text"
	}
	if f.IO.OutTTY {
		return "text"
	}
	return "json"
}

func (f *Factory) checkOutputFlag() error {
	o := f.Flags.Output
	if o == "" {
		o = f.Getenv("PI_OUTPUT")
	}
	switch strings.ToLower(o) {
	case "", "json", "text":
		return nil
	}
	f.Flags.Output = "json"
	return hostcore.Errf(hostcore.InvalidArgument, "--output must be json or text, not %q", o)
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// emit prints a command's answer (content or error) and sets the exit code.
// text renders the content for people; nil falls back to indented JSON.
func (f *Factory) emit(content any, text func(io.Writer), err error) error {
	if err != nil {
		// A failed command's partial content is not an answer; only the
		// error's own details travel with the envelope.
		f.failWith(err, nil)
		return nil
	}
	f.printed = true
	f.Exit = ExitOK
	if f.outputMode() == "json" {
		writeJSON(f.IO.Out, envelope{OK: true, Content: content})
		return nil
	}
	if text != nil {
		text(f.IO.Out)
	} else {
		b, _ := json.MarshalIndent(content, "", "  ")
		fmt.Fprintln(f.IO.Out, string(b))
	}
	return nil
}

func (f *Factory) fail(err error) { f.failWith(err, nil) }

func (f *Factory) failWith(err error, content any) {
	f.printed = true
	var he *hostcore.Error
	if !errors.As(err, &he) {
		he = hostcore.Wrap(hostcore.Internal, err, "internal error")
	}
	f.Exit = ExitCode(he.Code)
	if len(he.Details) > 0 && content == nil {
		content = he.Details
	}
	if f.outputMode() == "json" {
		writeJSON(f.IO.Out, envelope{OK: false, IsError: true, ErrorCode: he.Code, Message: he.Message, Content: content})
		return
	}
	fmt.Fprintf(f.IO.ErrOut, "pi: %s: %s\n", he.Code, he.Message)
}

// emitResult prints a tool call's envelope.
func (f *Factory) emitResult(res *hostcore.Result) error {
	f.printed = true
	f.Exit = ExitCode(res.ErrorCode)
	if f.beforeEnvelope != nil {
		f.beforeEnvelope()
	}
	if f.outputMode() == "json" {
		writeJSON(f.IO.Out, res)
		return nil
	}
	renderToolText(f.IO.Out, f.IO.ErrOut, res)
	return nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// withHost opens the host and emits what fn answers: the shape most
// commands share.
func (f *Factory) withHost(cmd *cobra.Command, fn func(h *hostcore.Host) (any, func(io.Writer), error)) error {
	h, err := f.Host(cmd.Context())
	if err != nil {
		return f.emit(nil, nil, err)
	}
	content, text, err := fn(h)
	return f.emit(content, text, err)
}

// sessionReply adapts a session-returning host call to withHost.
func sessionReply(v *hostcore.SessionView, err error) (any, func(io.Writer), error) {
	if err != nil {
		return nil, nil, err
	}
	return v, sessionText(v), nil
}

// reply is what a withHost body answers: content, its text rendering, err.
func reply(content any, text func(io.Writer), err error) (any, func(io.Writer), error) {
	return content, text, err
}
