package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// watchLoop is `pi permission watch`: an interactive loop on a terminal, a
// plain stream of cards otherwise.
func watchLoop(ctx context.Context, f *Factory, h *hostcore.Host, once bool) error {
	changes, stop := h.QueueChanges()
	defer stop()
	sid := f.SessionID()
	interactive := !once && f.IO.InTTY && f.IO.OutTTY
	var keys chan byte
	if interactive {
		if in, ok := f.IO.In.(*os.File); ok {
			if old, err := term.MakeRaw(int(in.Fd())); err == nil {
				defer term.Restore(int(in.Fd()), old)
				keys = make(chan byte)
				go func() {
					b := make([]byte, 1)
					for {
						if n, err := in.Read(b); err != nil || n == 0 {
							close(keys)
							return
						} else {
							keys <- b[0]
						}
					}
				}()
			} else {
				interactive = false
			}
		} else {
			interactive = false
		}
	}
	seen := map[string]bool{}
	skip := 0
	nl := "\n"
	if interactive {
		nl = "\r\n"
	}
	for {
		reqs, err := h.ListRequests(ctx, sid, false)
		if err != nil {
			f.fail(err)
			return nil
		}
		if !interactive {
			for _, r := range reqs {
				if !seen[r.RequestID] {
					seen[r.RequestID] = true
					card(f.IO.Out, r, time.Now())
				}
			}
			if once {
				if len(reqs) == 0 {
					fmt.Fprintln(f.IO.Out, "no pending requests")
				}
				return nil
			}
		} else {
			fmt.Fprint(f.IO.Out, "\x1b[H\x1b[2J")
			if len(reqs) == 0 {
				fmt.Fprint(f.IO.Out, "no pending requests — waiting (q to quit)"+nl)
			} else {
				cur := reqs[skip%len(reqs)]
				var b crlfWriter
				card(&b, cur, time.Now())
				fmt.Fprint(f.IO.Out, b.b.String())
				fmt.Fprintf(f.IO.Out, "%d session(s) waiting · [o] allow once  [s] allow for session  [d] deny  [n] next  [q] quit"+nl, len(reqs))
			}
		}
		tick := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			tick.Stop()
			return nil
		case <-changes:
		case <-tick.C:
		case k, ok := <-keys:
			if !ok || k == 'q' || k == 3 {
				tick.Stop()
				return nil
			}
			if len(reqs) > 0 {
				cur := reqs[skip%len(reqs)]
				decision := map[byte]string{'o': hostcore.DecideAllowOnce, 's': hostcore.DecideAllowSession, 'd': hostcore.DecideDeny}[k]
				switch {
				case k == 'n':
					skip++
				case decision != "":
					if _, err := h.Respond(ctx, "", cur.RequestID, decision); err != nil {
						fmt.Fprintf(f.IO.ErrOut, "pi: %v"+nl, err)
						time.Sleep(time.Second)
					}
				}
			}
		}
		tick.Stop()
	}
}

// crlfWriter turns \n into \r\n for a raw-mode terminal.
type crlfWriter struct{ b strings.Builder }

func (c *crlfWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			c.b.WriteByte('\r')
		}
		c.b.WriteByte(b) // bytes, not runes: card text is UTF-8
	}
	return len(p), nil
}
