// Command storefloor is the floor of any single-shot pi call: open the same
// store (same DSN pragmas, migrations already applied) and insert one row.
// scripts/bench-call.sh compares `pi tool read` against it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

func main() {
	ctx := context.Background()
	db, err := store.Open(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	r := &store.AuditRow{SessionID: "floor", ToolCallID: "floor", TraceID: "floor", ToolName: "Floor",
		ArgsHash: "-", ArgsPreview: "{}", Decision: "auto_allowed", OK: true}
	if err := db.InsertAudit(ctx, r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(r.ID)
}
