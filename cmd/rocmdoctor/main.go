// Command rocmdoctor diagnoses and repairs ELF binaries of the ROCm stack.
package main

import (
	"os"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

func main() { os.Exit(root.Main(os.Args[1:])) }
