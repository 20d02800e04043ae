// Command rocmdoctor diagnoses and repairs ELF binaries of the ROCm stack.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

func main() {
	// SIGINT and SIGTERM cancel the command's context instead of killing
	// the process: a write under way completes or is rolled back, and
	// temporaries are removed. A second signal kills as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	// Installed (or linked) as patchelf, it is patchelf: scripts, Nix,
	// conda and auditwheel call it by that name.
	if filepath.Base(os.Args[0]) == "patchelf" {
		os.Exit(root.MainPatchelf(ctx, os.Args[1:]))
	}
	os.Exit(root.Main(ctx, os.Args[1:]))
}
