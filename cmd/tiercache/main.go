// Command tiercache is the tiercache sidecar.
//
// The server itself (RESP over a Unix socket, configs, metrics) arrives
// with issue 6; until then only "version" works.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("tiercache", version)
		return
	}
	fmt.Fprintln(os.Stderr, "tiercache: the sidecar server is not built yet (issue 6); try 'tiercache version'")
	os.Exit(2)
}
