// Package clitest runs rocmdoctor commands in-process for the command
// packages' tests, with captured output streams.
package clitest

import (
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

// Testdata is the repository's testdata directory as seen from a command
// package (cmd/internal/NAME).
const Testdata = "../../../testdata/"

// Run runs rocmdoctor with args and returns its exit status, standard output
// and standard error.
func Run(args ...string) (code int, out, errOut string) {
	io, _, o, e := cli.Test()
	code = root.Run(io, args)
	return code, o.String(), e.String()
}
