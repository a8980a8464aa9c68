package main

import (
	"os"

	"github.com/pi-cli/pi/cmd"
)

func main() { os.Exit(cmd.Main(os.Args[1:])) }
