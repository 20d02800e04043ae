// Package docs carries the generated man pages into the rocmdoctor binary,
// so that `rocmdoctor man DIR` installs the pages of the very version it
// is (they are written by `go run ./cmd/gendocs docs`, and a test fails
// when they are stale).
package docs

import "embed"

// Man holds man/*.1.
//
//go:embed man/*.1
var Man embed.FS
